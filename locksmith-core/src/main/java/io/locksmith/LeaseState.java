package io.locksmith;

/**
 * Where a {@link Lease} stands. Transitions: {@code HELD ⇄ UNCERTAIN}, {@code HELD|UNCERTAIN → LOST},
 * {@code HELD|UNCERTAIN → RELEASED}; {@code LOST} and {@code RELEASED} are final.
 */
public enum LeaseState {
  /** Granted, and renewed or still within its validity. */
  HELD,
  /**
   * The backend cannot be reached to renew it: the lease may already be gone. It returns to
   * {@link #HELD} when a renewal succeeds within the validity, and becomes {@link #LOST} when the
   * validity runs out first.
   */
  UNCERTAIN,
  /** Ownership is known to be gone, or the validity elapsed without a successful renewal. */
  LOST,
  /** Released by its holder. */
  RELEASED;

  /** @return {@code true} for {@link #LOST} and {@link #RELEASED}, from which there is no way back */
  public boolean isFinal() {
    return this == LOST || this == RELEASED;
  }
}
