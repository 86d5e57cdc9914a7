package io.locksmith.spi;

/** Where a backend delivers wake-up notifications. Thread-safe; returns quickly. */
@FunctionalInterface
public interface WakeupSink {
  /**
   * @param name the lock that was freed
   * @param waiterId the registered waiter the backend chose to wake
   * @return whether a waiting acquisition took the wake-up; {@code false} means the waiter is gone and
   *     the backend should pass the wake-up on ({@link LockOps#passWakeup(String, String)} of the same kind)
   */
  boolean wake(String name, String waiterId);
}
