package io.locksmith.spi;

/**
 * Outcome of one acquire attempt. Immutable.
 *
 * @param granted whether {@code owner} now holds the lock
 * @param fencingToken the grant's token when granted
 * @param holdCount the owner's hold count when granted
 * @param retryAfterMillis when not granted: how long before trying again is worthwhile even without a
 *     wake-up (the holder's remaining lease, capped by the backend); the core's backstop against a lost
 *     notification
 * @param lost in {@link AcquireMode#REENTER} mode: the owner's hold is gone
 * @param replicasAcknowledged when granted: how many replicas confirmed the grant, or {@code -1} if the
 *     backend did not ask
 * @param permitsInForce for a semaphore: the permit count the backend applied (the stored one, which may
 *     differ from the count the caller declared), or {@code -1} if not reported
 * @param permitsTaken for a semaphore: how many permits were taken after this attempt (this grant
 *     included), or {@code -1} if not reported
 */
public record AcquireReply(boolean granted, long fencingToken, int holdCount, long retryAfterMillis,
    boolean lost, int replicasAcknowledged, int permitsInForce, int permitsTaken) {

  /**
   * @param token the fencing token
   * @param holdCount the hold count
   * @return a grant
   */
  public static AcquireReply granted(long token, int holdCount) {
    return new AcquireReply(true, token, holdCount, 0, false, -1, -1, -1);
  }

  /**
   * @param replicas how many replicas confirmed the grant
   * @return this grant, with the replicas' confirmation recorded
   */
  public AcquireReply withReplicasAcknowledged(int replicas) {
    return new AcquireReply(granted, fencingToken, holdCount, retryAfterMillis, lost, replicas,
        permitsInForce, permitsTaken);
  }

  /**
   * A semaphore's counts as the backend saw them in this attempt, so that the client can tell a caller
   * whose declared count is not the one in force, and say in a timeout how many permits there are.
   *
   * @param inForce the permit count applied, at least 1
   * @param taken the permits taken after this attempt, not negative
   * @return this reply with the counts recorded
   */
  public AcquireReply withPermits(int inForce, int taken) {
    return new AcquireReply(granted, fencingToken, holdCount, retryAfterMillis, lost, replicasAcknowledged,
        inForce, taken);
  }

  /**
   * @param retryAfterMillis backstop delay before the next attempt
   * @return a refusal because another owner holds the lock
   */
  public static AcquireReply busy(long retryAfterMillis) {
    return new AcquireReply(false, 0, 0, retryAfterMillis, false, -1, -1, -1);
  }

  /** @return the reply to a re-entry whose hold is gone */
  public static AcquireReply lostHold() {
    return new AcquireReply(false, 0, 0, 0, true, -1, -1, -1);
  }
}
