package io.locksmith.spi;

/**
 * Which lock primitive a {@link LockOps} serves. A backend keeps each primitive's keys apart; the two
 * sides of a read-write lock share one lock name and exclude each other.
 */
public enum Primitive {
  /** The exclusive re-entrant lock. */
  EXCLUSIVE,
  /** The exclusive lock granted in arrival order. */
  FAIR,
  /** The shared side of a read-write lock. */
  READ,
  /** The exclusive side of a read-write lock; new readers wait while a writer waits. */
  WRITE
}
