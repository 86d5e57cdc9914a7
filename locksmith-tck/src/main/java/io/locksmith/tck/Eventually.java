package io.locksmith.tck;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Polling assertions for conditions another thread or process brings about. */
public final class Eventually {
  private Eventually() {}

  /**
   * Polls {@code condition} every few milliseconds until it holds or {@code within} elapses. The
   * polling interval is that of an assertion, not synchronisation: the condition is what is awaited.
   *
   * @param within the longest wait
   * @param condition what should become true
   * @return whether it became true in time
   * @throws InterruptedException if interrupted while waiting
   */
  public static boolean eventually(Duration within, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    while (System.nanoTime() < deadline) {
      if (condition.getAsBoolean()) {
        return true;
      }
      Thread.sleep(5);
    }
    return condition.getAsBoolean();
  }
}
