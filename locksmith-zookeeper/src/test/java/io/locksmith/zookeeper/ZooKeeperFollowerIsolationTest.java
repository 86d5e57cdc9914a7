package io.locksmith.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.Lease;
import io.locksmith.LeaseState;
import io.locksmith.LockOptions;
import io.locksmith.testkit.zookeeper.ZooKeeperEnsemble;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * A holder whose server is cut off from the leader (issue 23, item 13). The follower keeps answering the
 * holder's reads for up to syncLimit × tick (5 × 200 ms here) while the leader, which hears nothing of
 * the session any more, expires it after the session timeout (1 s) and lets another client in. A holder
 * that took those reads as proof of its session declared its loss about a second after the other client
 * was granted; proven through the leader (a sync), it declares it before.
 */
class ZooKeeperFollowerIsolationTest {
  private static final Duration TICK = Duration.ofMillis(200);
  private static final Duration SESSION = Duration.ofSeconds(1);

  @Test
  void aHolderWhoseServerIsCutFromTheLeaderIsLostBeforeAnotherClientIsGranted() throws Exception {
    String name = "isolated-" + System.nanoTime();
    try (ZooKeeperEnsemble ensemble = ZooKeeperEnsemble.startPartitionable(3, TICK)) {
      int leader = ensemble.leader();
      int follower = leader == 0 ? 1 : 0;
      try (ZooKeeperLockClient holder = ZooKeeperLockClient.builder()
              .uri("zookeeper://" + ensemble.host() + ":" + ensemble.port(follower)).sessionTimeout(SESSION)
              // a follower of a freshly started ensemble may take a while to serve on a loaded host; the
              // connection timeout bounds only the build and each operation, not the loss bound under test
              .connectionTimeout(Duration.ofSeconds(5)).build();
          ZooKeeperLockClient other = ZooKeeperLockClient.builder()
              .uri("zookeeper://" + ensemble.host() + ":" + ensemble.port(leader)).sessionTimeout(SESSION).build()) {
        LeaseEventLog log = new LeaseEventLog();
        holder.backend.observe(log);
        Lease lease = holder.lock(name, LockOptions.watched(Duration.ofSeconds(30))).acquire();
        AtomicLong onLostAt = new AtomicLong();
        lease.onLost(() -> onLostAt.set(System.nanoTime()));
        CompletableFuture<Long> grantedAt = other.lock(name).acquireAsync(Duration.ofSeconds(20))
            .toCompletableFuture().thenApply(l -> {
              long at = System.nanoTime();
              l.release();
              return at;
            });
        ensemble.isolateFromLeader(follower);
        long cut = System.nanoTime();
        long granted = grantedAt.get(20, TimeUnit.SECONDS);
        LeaseEventLog.Event lost = log.first("lost");
        System.out.printf("[zk-follower-cut] tick %d ms, session %d ms: holder lost %s ms after the cut, the other"
            + " client granted %d ms after the cut%n", TICK.toMillis(), SESSION.toMillis(),
            lost == null ? "(not yet)" : Long.toString(TimeUnit.NANOSECONDS.toMillis(lost.nanos() - cut)),
            TimeUnit.NANOSECONDS.toMillis(granted - cut));
        assertThat(lost).as("the holder declared its lease lost before the other client was granted").isNotNull();
        assertThat(granted - lost.nanos()).as("margin").isPositive();
        assertThat(onLostAt.get()).as("onLost ran").isNotZero();
        assertThat(granted - onLostAt.get()).as("onLost ran before the other grant").isPositive();
        assertThat(lease.state()).isEqualTo(LeaseState.LOST);
      } finally {
        ensemble.healQuorumLinks();
      }
    }
  }
}
