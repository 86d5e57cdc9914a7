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
 */
public record AcquireReply(boolean granted, long fencingToken, int holdCount, long retryAfterMillis,
    boolean lost, int replicasAcknowledged) {

  /**
   * @param token the fencing token
   * @param holdCount the hold count
   * @return a grant
   */
  public static AcquireReply granted(long token, int holdCount) {
    return new AcquireReply(true, token, holdCount, 0, false, -1);
  }

  /**
   * @param replicas how many replicas confirmed the grant
   * @return this grant, with the replicas' confirmation recorded
   */
  public AcquireReply withReplicasAcknowledged(int replicas) {
    return new AcquireReply(granted, fencingToken, holdCount, retryAfterMillis, lost, replicas);
  }

  /**
   * @param retryAfterMillis backstop delay before the next attempt
   * @return a refusal because another owner holds the lock
   */
  public static AcquireReply busy(long retryAfterMillis) {
    return new AcquireReply(false, 0, 0, retryAfterMillis, false, -1);
  }

  /** @return the reply to a re-entry whose hold is gone */
  public static AcquireReply lostHold() {
    return new AcquireReply(false, 0, 0, 0, true, -1);
  }
}
