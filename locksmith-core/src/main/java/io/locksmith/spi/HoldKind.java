package io.locksmith.spi;

/**
 * Which kind of hold a {@link BackendEvents#ownerEvicted backend notice} concerns: a lock primitive, or
 * a semaphore's permit. Owner ids are unique per lease, with one exception (a read-write lock's
 * downgrade takes the read hold under the write lease's owner id), so the kind is what tells those two
 * leases apart.
 */
public enum HoldKind {
  /** The exclusive re-entrant lock ({@link Primitive#EXCLUSIVE}). */
  EXCLUSIVE,
  /** The fair lock ({@link Primitive#FAIR}). */
  FAIR,
  /** A reader of a read-write lock ({@link Primitive#READ}). */
  READ,
  /** The writer of a read-write lock ({@link Primitive#WRITE}). */
  WRITE,
  /** One permit of a semaphore. */
  PERMIT;

  /**
   * @param primitive a lock primitive
   * @return the kind of its holds
   * @throws NullPointerException if {@code primitive} is null
   */
  public static HoldKind of(Primitive primitive) {
    switch (primitive) {
      case EXCLUSIVE:
        return EXCLUSIVE;
      case FAIR:
        return FAIR;
      case READ:
        return READ;
      case WRITE:
        return WRITE;
      default:
        throw new AssertionError(primitive);
    }
  }
}
