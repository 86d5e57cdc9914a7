package io.locksmith.redis;

/**
 * What a grant that too few replicas confirmed in time means; see
 * {@link RedisLockClient.Builder#replicaAcknowledgement(int, java.time.Duration, ReplicaAckPolicy)}.
 */
public enum ReplicaAckPolicy {
  /**
   * The acquisition fails: the grant is released on the master and the caller gets a
   * {@link io.locksmith.BackendUnavailableException} saying how many replicas confirmed.
   */
  REQUIRE,
  /** The grant stands; {@link io.locksmith.Lease#replicasAcknowledged()} tells how many confirmed. */
  REPORT
}
