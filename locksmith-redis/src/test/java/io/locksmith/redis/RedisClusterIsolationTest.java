package io.locksmith.redis;

import static io.locksmith.redis.RedisClusterTest.nameOn;
import static io.locksmith.tck.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.Lease;
import io.locksmith.LeaseState;
import io.locksmith.LockOptions;
import io.locksmith.testkit.RedisCluster;
import io.locksmith.testkit.RedisServer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * One master of a Cluster stops answering (SIGSTOP, and a node timeout long enough that no failover
 * starts): only the leases on that master may suffer. Regression: renewals are batched per slot, and one
 * failed batch used to fail the whole renewal, so leases on healthy masters went LOST too.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisClusterIsolationTest {

  @Test
  void aHungMasterCostsOnlyTheLeasesItHolds() throws Exception {
    try (RedisCluster cluster = RedisCluster.builder().nodeTimeout(Duration.ofSeconds(60)).start();
        RedisLockClient client = RedisLockClient.builder()
            .uri(cluster.seedUri().replace("redis://", "redis-cluster://"))
            .commandTimeout(Duration.ofMillis(500)).build()) {
      RedisServer hung = cluster.masters().get(0);
      RedisServer healthy = cluster.masters().get(1);
      LockOptions threeSeconds = LockOptions.watched(Duration.ofSeconds(3));
      Lease onHung = client.lock(nameOn(cluster, client, hung, "iso-hung-"), threeSeconds).acquire();
      Lease onHealthy = client.lock(nameOn(cluster, client, healthy, "iso-ok-"), threeSeconds).acquire();
      hung.pause();
      try {
        // the lease on the hung master cannot be renewed: it runs out of validity
        assertThat(eventually(Duration.ofSeconds(10), () -> onHung.state() == LeaseState.LOST)).isTrue();
        // ... while the one on a healthy master stays HELD, for longer than a whole lease. (Its renewals
        // share batches with the hung one's and are confirmed when the hung batch times out, up to the
        // command timeout late, which narrows its validity margin but never ends it.)
        long until = System.nanoTime() + Duration.ofSeconds(4).toNanos();
        while (System.nanoTime() < until) {
          assertThat(onHealthy.state()).as("the lease whose master answers").isEqualTo(LeaseState.HELD);
          Thread.sleep(50); // sampling the state over a window, not waiting for an event
        }
      } finally {
        hung.resume();
      }
      assertThat(onHealthy.release()).isTrue();
    }
  }
}
