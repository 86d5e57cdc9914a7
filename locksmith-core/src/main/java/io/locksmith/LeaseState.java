package io.locksmith;

/**
 * Where a {@link Lease} stands. Transitions: {@code HELD ⇄ UNCERTAIN}, {@code HELD|UNCERTAIN → LOST},
 * {@code HELD|UNCERTAIN → RELEASED}; {@code LOST} and {@code RELEASED} are final.
 */
public enum LeaseState {
  /** Granted, and renewed or still within its validity. */
  HELD,
  /**
   * The backend cannot be reached, from the moment the connection drops (where the backend can see
   * that) or a renewal fails: the lease may already be gone. It returns to {@link #HELD} only when the
   * backend confirms it within the validity (the client verifies every lease as soon as the connection
   * is back), and becomes {@link #LOST} when the backend says it is gone or the validity runs out first.
   */
  UNCERTAIN,
  /**
   * Ownership is known to be gone (a renewal or verification found it gone, or the backend reported
   * that someone else removed the hold, e.g. a force-unlock), or the validity elapsed without a
   * successful renewal.
   */
  LOST,
  /** Released by its holder. */
  RELEASED;

  /** @return {@code true} for {@link #LOST} and {@link #RELEASED}, from which there is no way back */
  public boolean isFinal() {
    return this == LOST || this == RELEASED;
  }
}
