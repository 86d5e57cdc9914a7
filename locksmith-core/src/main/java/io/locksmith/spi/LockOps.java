package io.locksmith.spi;

import io.locksmith.LockInfo;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * The primitive operations of one lock kind (or one side of it) on a backend. Each returns a stage that
 * completes (on any thread) within the backend's command timeout; failures to reach the server complete
 * it exceptionally with {@link io.locksmith.BackendUnavailableException}, other backend errors with
 * {@link io.locksmith.LockException}. Methods must not block the caller. Implementations are
 * thread-safe.
 *
 * <p>Names passed in are validated lock names without namespace; the backend applies
 * {@link BackendContext#namespace()} and keeps each kind's keys apart, so an exclusive lock and a fair
 * lock of the same name are different locks. Owner ids are opaque strings minted by the core, unique
 * per lease (a read-write lock's downgrade reuses the write lease's owner id for the read side).
 */
public interface LockOps {

  /**
   * One atomic attempt to grant {@code name} to {@code owner}.
   *
   * @param name the lock name
   * @param owner the lease's owner id
   * @param leaseMillis the lease time to set
   * @param mode whether this is a fresh acquisition or a re-entry of a hold the owner believes it has
   * @param waiterId when not null and the lock is held by another owner, register this waiter so that a
   *     release wakes it through {@link WakeupSink#wake(String, String)}
   * @return the outcome
   */
  CompletionStage<AcquireReply> acquire(String name, String owner, long leaseMillis, AcquireMode mode,
      String waiterId);

  /**
   * Drops one hold, or all holds, of {@code owner}, only if it owns the lock; freeing the lock wakes
   * one registered waiter.
   *
   * @param name the lock name
   * @param owner the lease's owner id
   * @param all whether to drop every hold
   * @return the hold count left (0 = freed), or {@code -1} if {@code owner} did not own the lock
   */
  CompletionStage<Integer> release(String name, String owner, boolean all);

  /**
   * Extends several leases in as few round trips as the backend allows, each only if still owned.
   *
   * @param requests the leases to extend
   * @return one value per request, in order: whether it was still owned and is now extended, or
   *     {@code null} if the backend cannot tell for that lease (it becomes UNCERTAIN and is retried
   *     within its validity, like a failed call)
   */
  CompletionStage<List<Boolean>> renew(List<RenewRequest> requests);

  /**
   * Removes a registered waiter that gives up. Best effort; a missed removal costs one wasted wake-up,
   * which is passed on with {@link #passWakeup(String, String)}.
   *
   * @param name the lock name
   * @param waiterId the waiter
   */
  void cancelWait(String name, String waiterId);

  /**
   * A wake-up reached a waiter that is gone: forget that waiter if it is still registered (its
   * cancellation may have been lost, and a queue that keeps its head registered until the grant would
   * otherwise wake it again and again), then, if the lock is free, wake the next registered waiter.
   *
   * @param name the lock name
   * @param goneWaiterId the waiter the wake-up reached
   */
  void passWakeup(String name, String goneWaiterId);

  /**
   * @param name the lock name
   * @return the holder, or empty if the lock is free
   */
  CompletionStage<Optional<LockInfo>> inspect(String name);

  /**
   * Deletes the lock whoever holds it and wakes one waiter.
   *
   * @param name the lock name
   * @return whether a lock was deleted
   */
  CompletionStage<Boolean> forceUnlock(String name);

}
