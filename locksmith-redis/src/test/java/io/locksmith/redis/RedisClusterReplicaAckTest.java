package io.locksmith.redis;

import static io.locksmith.redis.RedisReplicaAckIsolationTest.COMMAND_TIMEOUT;
import static io.locksmith.redis.RedisReplicaAckIsolationTest.HELD_LEASE;
import static io.locksmith.redis.RedisReplicaAckIsolationTest.RUN;
import static io.locksmith.redis.RedisReplicaAckIsolationTest.THREADS;
import static io.locksmith.redis.RedisReplicaAckIsolationTest.WAIT_TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.ClientOptions;
import io.locksmith.Lease;
import io.locksmith.testkit.RedisCluster;
import io.locksmith.testkit.RedisServer;
import io.locksmith.testkit.SharedTopology;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Replica acknowledgement on a Redis Cluster must not stall the client's node connection to a master whose
 * replica does not answer: acknowledged grants run on cluster connections of their own
 * ({@link ReplicaAckLanes}). Uses the run's shared cluster; the replica it freezes is resumed at the end.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class RedisClusterReplicaAckTest {
  @RegisterExtension
  static final SharedTopology<RedisCluster> CLUSTER = SharedTopology.cluster();

  @Test
  void aWaitForAFrozenReplicaDelaysNoRenewalOrOtherCommandOnItsMaster() throws Exception {
    RedisCluster cluster = CLUSTER.get();
    try (RedisLockClient locks = RedisLockClient.builder()
        .uri(cluster.seedUri().replace("redis://", "redis-cluster://")).commandTimeout(COMMAND_TIMEOUT)
        .options(ClientOptions.builder().namespace("ack-isolation").build())
        .replicaAcknowledgement(1, WAIT_TIMEOUT, ReplicaAckPolicy.REPORT).build()) {
      Lease held = locks.lock("held", HELD_LEASE).acquire(Duration.ofSeconds(5));
      assertThat(held.replicasAcknowledged()).hasValue(1);
      LeaseHistory history = LeaseHistory.of(held);
      RedisServer master = cluster.masterForSlot(RedisCluster.slot(RedisClusterTest.key(locks, "held")));
      List<RedisServer> frozen = cluster.replicasOf(master);
      frozen.forEach(RedisServer::pause);
      try {
        // the names spread over the three masters: about a third of the grants wait for the frozen replica
        RedisReplicaAckIsolationTest.Counts counts = RedisReplicaAckIsolationTest.load(locks, "cluster-");
        System.out.printf("[replica-ack] Cluster, the replica of the held lock's master frozen, WAIT %d ms,"
            + " command timeout %d ms, %d threads, %d s: %s; held lease %s%n", WAIT_TIMEOUT.toMillis(),
            COMMAND_TIMEOUT.toMillis(), THREADS, RUN.toSeconds(), counts, history);
        assertThat(counts.failures).as("operations that failed").isEmpty();
        assertThat(counts.granted.get()).isGreaterThanOrEqualTo(THREADS * 2);
        assertThat(history.toString()).as("the held lease's states").isEqualTo("HELD");
        assertThat(held.release()).isTrue();
      } finally {
        frozen.forEach(RedisServer::resume);
      }
    }
  }
}
