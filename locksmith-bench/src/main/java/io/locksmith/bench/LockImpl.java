package io.locksmith.bench;

/**
 * One lock implementation under test. {@link #acquire(String, long)} blocks until the lock is held or
 * the wait is over, and returns what releases it; both run on the same thread, as thread-bound peers
 * (Redisson, Spring) require. The bounded wait keeps every run bounded, whatever a peer does with a
 * thousand waiters. Implementations are thread-safe.
 */
interface LockImpl extends AutoCloseable {
  /** @return the {@code impl} name reported in results */
  String name();

  /**
   * @param name lock name
   * @param waitNanos longest wait
   * @return releases the lock, or null if it was not acquired within the wait
   * @throws Exception whatever the implementation throws
   */
  Held acquire(String name, long waitNanos) throws Exception;

  /**
   * The read side, for the {@link Scenario#RW_MIX rw-mix} scenario: shared with other readers where
   * the implementation has one; otherwise the same lock as {@link #acquire}, a baseline.
   *
   * @param name lock name
   * @param waitNanos longest wait
   * @return releases the read hold, or null if it was not acquired within the wait
   * @throws Exception whatever the implementation throws
   */
  default Held acquireShared(String name, long waitNanos) throws Exception {
    return acquire(name, waitNanos);
  }

  /** A held lock. */
  interface Held {
    void release() throws Exception;
  }

  @Override
  void close();
}
