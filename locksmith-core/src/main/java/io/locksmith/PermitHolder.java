package io.locksmith;

import java.time.Duration;
import java.util.Objects;

/**
 * One holder of a semaphore permit, as an operator sees it in {@link SemaphoreState#holders()}. Every
 * acquisition of a {@link DistributedSemaphore} is one owner holding exactly one permit, so a holder
 * holds one permit. Immutable; it describes the moment it was read.
 *
 * @param owner the backend's owner id of the permit's lease, in the form {@link LockInfo#owner()} describes
 * @param fencingToken the token of the permit's grant
 * @param remainingTtl how long the server keeps the permit if it is not renewed, as the server sees it
 */
public record PermitHolder(String owner, long fencingToken, Duration remainingTtl) {
  /**
   * @throws NullPointerException if {@code owner} or {@code remainingTtl} is null
   * @throws IllegalArgumentException if {@code remainingTtl} is negative
   */
  public PermitHolder {
    Objects.requireNonNull(owner, "owner");
    Objects.requireNonNull(remainingTtl, "remainingTtl");
    if (remainingTtl.isNegative()) {
      throw new IllegalArgumentException("remainingTtl must not be negative, was " + remainingTtl);
    }
  }
}
