package io.locksmith;

import java.util.Optional;

/**
 * A named read-write lock: many readers or one writer, shared by every process on the same backend and
 * namespace. Each side is a {@link DistributedLock} with both views.
 *
 * <ul>
 *   <li><b>Phase-fair.</b> The readers waiting when a writer's hold ends (released or expired) enter
 *       together before the next writer, so a stream of writers cannot starve readers; a reader that
 *       arrives while a writer waits (and none holds) waits behind that writer, so a stream of readers
 *       cannot starve writers. Readers that already hold keep their holds (and may re-enter).
 *   <li><b>Downgrade</b> (write → read) is allowed: a thread that holds the write side may lock the read
 *       side (then unlock the write side), and {@link #downgrade(Lease)} turns a write lease into a
 *       read lease without letting a writer in between. Both check that the write hold is still
 *       this writer's: a downgrade is granted at once, with the write's fencing token, or fails with
 *       {@link LeaseLostException} (the write lease is then {@link LeaseState#LOST} and no read hold
 *       is left), never turned into a fresh read after another writer's grant.
 *   <li><b>Upgrade</b> (read → write) is refused: a thread that holds the read side and asks for the
 *       write side gets an {@link IllegalStateException} at once instead of waiting for itself forever.
 *       A lease-view read hold cannot be told apart from another process's, so do not ask for the write
 *       side while holding a read lease: it waits until that lease ends.
 *   <li><b>Fencing.</b> The write side mints a new token per grant, strictly increasing like an
 *       exclusive lock's. A read lease carries the token of the latest write grant (or 0): use it to
 *       tell which write a reader saw, not to fence writes.
 *   <li>Read and write leases are renewed like any other (watched or fixed, per {@link LockOptions}).
 * </ul>
 *
 * <p>Instances are thread-safe and cheap.
 */
public interface DistributedReadWriteLock {

  /** @return the lock name */
  String name();

  /** @return the lease policy of both sides */
  LockOptions options();

  /** @return the shared side */
  DistributedLock readLock();

  /** @return the exclusive side */
  DistributedLock writeLock();

  /**
   * Turns a held write lease into a read lease: the read hold is taken first, then the write lease is
   * released, so no writer can slip in between. The write lease ends {@link LeaseState#RELEASED}.
   *
   * @param writeLease a held lease of this lock's write side
   * @return the read lease, with the write lease's fencing token
   * @throws LeaseLostException if the write lease is no longer held (nothing is then held)
   * @throws BackendUnavailableException if the backend cannot be reached; the write lease is then
   *     still held (unless it was released and only the reply was lost, in which case it is RELEASED)
   * @throws IllegalArgumentException if {@code writeLease} is not a write lease of this lock from this
   *     client
   * @throws NullPointerException if {@code writeLease} is null
   * @throws IllegalStateException if the client is closed
   */
  Lease downgrade(Lease writeLease);

  /**
   * Reads the writer, for operators.
   *
   * @return the writer, or empty if no writer holds
   * @throws BackendUnavailableException if the backend cannot be reached
   */
  default Optional<LockInfo> inspectWriter() {
    return writeLock().inspect();
  }
}
