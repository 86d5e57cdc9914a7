package io.locksmith.bench;

/**
 * One lock implementation under test. {@link #acquire(String)} blocks until the lock is held and returns
 * what releases it; both run on the same thread, as thread-bound peers (Redisson, Spring) require.
 * Implementations are thread-safe.
 */
interface LockImpl extends AutoCloseable {
  /** @return the {@code impl} name reported in results */
  String name();

  /**
   * @param name lock name
   * @return releases the lock
   * @throws Exception whatever the implementation throws
   */
  Held acquire(String name) throws Exception;

  /** A held lock. */
  interface Held {
    void release() throws Exception;
  }

  @Override
  void close();
}
