package io.locksmith;

import java.util.concurrent.atomic.LongAdder;

/**
 * A {@link DegradationListener} that counts: degraded grants and returns to the backend. Give one to
 * {@link DegradationPolicy.Builder#listener} and read it from a metrics gauge or counter function, or
 * from a health check ({@code degradedGrants()} rising means a backend outage is being ridden out
 * locally). Thread-safe; the counts only grow.
 */
public final class DegradationCounter implements DegradationListener {
  private final LongAdder degraded = new LongAdder();
  private final LongAdder restored = new LongAdder();

  /** A counter at zero. */
  public DegradationCounter() {}

  @Override
  public void degraded(String lockName, BackendUnavailableException cause) {
    degraded.increment();
  }

  @Override
  public void restored(String lockName) {
    restored.increment();
  }

  /** @return how many leases were granted degraded (JVM-local) so far */
  public long degradedGrants() {
    return degraded.sum();
  }

  /** @return how many times a lock's backend granted it again after a degraded grant */
  public long restorations() {
    return restored.sum();
  }

  @Override
  public String toString() {
    return "DegradationCounter[degraded=" + degradedGrants() + ", restored=" + restorations() + "]";
  }
}
