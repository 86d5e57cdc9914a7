package io.locksmith;

/**
 * A named semaphore: a number of permits shared by every process on the same backend and namespace.
 * Each {@link #acquire()} takes one permit under its own {@link Lease} (fixed or watched, per
 * {@link #options()}), so a permit held by a process that crashed comes back when its lease runs out.
 * A release wakes a waiter by notification where the backend has it.
 *
 * <p><b>Permit count.</b> The count in force is stored with the semaphore: the first acquisition stores
 * the count it was declared with ({@link LockClient#semaphore(String, int)}) if none is stored, and
 * {@link #setPermits(int)} changes it for every client. Declaring a different count later does not
 * change a stored one; {@link #describe()} shows what is in force.
 *
 * <p>Permits are not re-entrant: each acquisition is a new owner. The lease's fencing token increases
 * with every permit granted under this name. Instances are thread-safe and cheap.
 */
public interface DistributedSemaphore extends LeaseSource {

  /** @return the permit count this object was declared with */
  int declaredPermits();

  /**
   * Reads the permit count in force and how many are taken.
   *
   * @return the snapshot
   * @throws BackendUnavailableException if the backend cannot be reached
   * @throws IllegalStateException if the client is closed
   */
  SemaphoreInfo describe();

  /**
   * Changes the permit count for every client, for operators. Held permits are never revoked; if more
   * are taken than the new count, acquisitions wait until enough are returned. Raising the count wakes
   * waiters for the new permits.
   *
   * @param permits the new count
   * @throws IllegalArgumentException if {@code permits} is less than 1
   * @throws BackendUnavailableException if the backend cannot be reached
   * @throws IllegalStateException if the client is closed
   */
  void setPermits(int permits);

  /**
   * Drops every permit whoever holds it, for operators clearing permits that dead processes left
   * behind. Their holders, if alive, are told as by {@link LockClient#forceUnlock(String)} (their leases
   * are {@link LeaseState#LOST} at once, or at their next renewal on a backend that cannot tell them);
   * waiters are woken for the freed permits. The stored permit count stays.
   *
   * @return whether any permit was dropped
   * @throws BackendUnavailableException if the backend cannot be reached
   * @throws IllegalStateException if the client is closed
   */
  boolean forceUnlock();
}
