package io.locksmith.spi;

import io.locksmith.SemaphoreInfo;
import io.locksmith.SemaphoreState;
import java.util.concurrent.CompletionStage;

/**
 * The operations of a semaphore. A grant is one permit, held by one owner under its own lease:
 * {@link #acquire} in {@link AcquireMode#NEW} mode takes a permit, {@link #release} returns it,
 * {@link #renew} extends it. A permit whose lease runs out returns by itself. Re-entry does not exist:
 * every permit has its own owner id. Same failure rules as {@link LockOps}. For a semaphore,
 * {@link #inspect} reports one holder (the backend documents which) with hold count 1, and
 * {@link #forceUnlock} drops every permit, keeps the stored count and wakes one waiter per permit freed.
 */
public interface SemaphoreOps extends LockOps {

  /**
   * @param name the semaphore name
   * @return the permit count in force and how many permits are taken
   */
  CompletionStage<SemaphoreInfo> describe(String name);

  /**
   * Reads what is stored for the semaphore, for operators: the stored permit count if any, every holder
   * of an unexpired permit (owner, fencing token, time left) and the waiters. Declares nothing and stores
   * nothing: the result does not depend on the count this object was created with, and a semaphore that
   * has no stored count still has none afterwards.
   *
   * @param name the semaphore name
   * @return the snapshot
   */
  CompletionStage<SemaphoreState> state(String name);

  /**
   * Stores a new permit count for the semaphore, for every client. Held permits are never revoked: if
   * more are taken than the new count allows, new acquisitions wait until enough are returned. Raising
   * the count wakes as many waiters as permits became free.
   *
   * @param name the semaphore name
   * @param permits the new permit count, at least 1
   * @return completes when stored
   */
  CompletionStage<Void> setPermits(String name, int permits);
}
