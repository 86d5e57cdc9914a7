package io.locksmith;

/**
 * A monotonic time source in nanoseconds, used for every validity computation. Injectable so that
 * tests can reason about time without sleeping. Implementations must be thread-safe and never go
 * backwards.
 */
@FunctionalInterface
public interface Ticker {
  /** @return nanoseconds from an arbitrary fixed origin; only differences are meaningful */
  long nanoTime();

  /** @return the JVM's monotonic clock, {@link System#nanoTime()} */
  static Ticker system() {
    return System::nanoTime;
  }
}
