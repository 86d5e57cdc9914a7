package io.locksmith.spi;

/** Where a backend delivers wake-up notifications. Thread-safe; returns quickly. */
@FunctionalInterface
public interface WakeupSink {
  /**
   * @param name the lock that was freed
   * @param waiterId the registered waiter the backend chose to wake
   */
  void wake(String name, String waiterId);
}
