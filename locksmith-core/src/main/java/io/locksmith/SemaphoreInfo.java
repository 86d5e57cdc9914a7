package io.locksmith;

import java.util.Objects;

/**
 * A snapshot of a semaphore, from {@link DistributedSemaphore#describe()}. Immutable; it describes the
 * moment it was read.
 *
 * @param name the semaphore name (without namespace)
 * @param permits the permit count in force: the stored count, or the declared one if none is stored
 * @param taken how many permits are held under unexpired leases (may exceed {@code permits} right after
 *     an operator lowered the count)
 * @param waiters how many waiters the server knows of (0 where the backend does not track them)
 */
public record SemaphoreInfo(String name, int permits, int taken, int waiters) {
  /** @throws NullPointerException if {@code name} is null */
  public SemaphoreInfo {
    Objects.requireNonNull(name, "name");
  }

  /** @return permits free right now, never negative */
  public int available() {
    return Math.max(0, permits - taken);
  }
}
