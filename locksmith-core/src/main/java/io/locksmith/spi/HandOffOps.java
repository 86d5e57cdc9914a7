package io.locksmith.spi;

import java.util.concurrent.CompletionStage;

/**
 * Optional capability of a lock kind's {@link LockOps}: a release that, in the same atomic step on the
 * backend, grants the lock to another owner of the same client that is already waiting for it (a local
 * hand-off). The client picks that waiter; the backend mints the new owner's grant as any other grant (a
 * new, larger fencing token; one hold; its own lease) and may refuse the hand-off and release plainly
 * instead, for example to let waiters of other clients have their turn. Implementations are thread-safe.
 */
public interface HandOffOps extends LockOps {

  /**
   * @return whether {@link #releaseAndHandOff} may be used now; a backend that must confirm every grant
   *     in a further step (replica acknowledgements) answers false
   */
  boolean handsOffLocally();

  /**
   * Drops every hold of {@code owner} and, if it held the lock, grants it to {@code nextOwner} or, when the
   * backend declines the hand-off, releases it plainly (waking one registered waiter, as
   * {@link #release} does). Never grants when {@code owner} did not hold the lock.
   *
   * @param name lock name
   * @param owner the releasing owner
   * @param nextOwner a waiting owner of this client, given the lock with one hold
   * @param nextLeaseMillis the lease of {@code nextOwner}'s grant
   * @param nextWaiterId {@code nextOwner}'s registered waiter id, dropped from the waiters when granted
   * @return the outcome; fails with {@link io.locksmith.BackendUnavailableException} if the backend did not
   *     answer (then the release, and the grant, may or may not have been applied)
   */
  CompletionStage<HandOffReply> releaseAndHandOff(String name, String owner, String nextOwner,
      long nextLeaseMillis, String nextWaiterId);
}
