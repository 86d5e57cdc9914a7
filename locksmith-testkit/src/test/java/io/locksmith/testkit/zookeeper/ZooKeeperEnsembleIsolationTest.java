package io.locksmith.testkit.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.Test;

/**
 * {@link ZooKeeperEnsemble#isolateFromLeader(int)} cuts a follower off from its leader for real: the
 * follower still answers its clients' reads, a {@code sync} through it gets no answer, the leader and
 * the other follower go on writing, and after {@link ZooKeeperEnsemble#healQuorumLinks()} the follower
 * catches up.
 */
class ZooKeeperEnsembleIsolationTest {
  private static final Duration TICK = Duration.ofMillis(200);

  @Test
  void aFollowerCutOffFromTheLeaderAnswersReadsButNoSyncUntilHealed() throws Exception {
    try (ZooKeeperEnsemble ensemble = ZooKeeperEnsemble.startPartitionable(3, TICK)) {
      int leader = ensemble.leader();
      int follower = leader == 0 ? 1 : 0;
      try (ZooKeeper onLeader = connect(ensemble, leader); ZooKeeper onFollower = connect(ensemble, follower)) {
        onLeader.create("/before", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        assertThat(sync(onFollower).get(5, TimeUnit.SECONDS)).isZero();
        assertThat(onFollower.exists("/before", false)).isNotNull();

        assertThat(ensemble.isolateFromLeader(follower)).isEqualTo(leader);
        // a read right after the cut: served by the follower alone (it notices the silence only after
        // syncLimit = 5 ticks = 1 s)
        assertThat(onFollower.exists("/before", false)).as("a local read still answered").isNotNull();
        CompletableFuture<Integer> cutSync = sync(onFollower);
        onLeader.create("/during", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        assertThat(onLeader.exists("/during", false)).as("the leader writes with the other follower").isNotNull();
        // 600 ms: the sync is forwarded to the leader and never answered (0 would mean it was)
        Integer rc = null;
        try {
          rc = cutSync.get(600, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException expected) {
          // no answer: what the cut is for
        }
        assertThat(rc == null || rc != 0).as("a sync through the cut-off follower is not answered OK (rc %s)", rc)
            .isTrue();
        assertThat(ensemble.mode(leader)).isEqualTo("leader");

        ensemble.healQuorumLinks();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        boolean caughtUp = false;
        while (!caughtUp && System.nanoTime() < deadline) {
          try (ZooKeeper again = connect(ensemble, follower)) {
            caughtUp = sync(again).get(2, TimeUnit.SECONDS) == 0 && again.exists("/during", false) != null;
          } catch (Exception notYet) {
            Thread.sleep(200);
          }
        }
        assertThat(caughtUp).as("the follower caught up after the heal").isTrue();
      }
    }
  }

  @Test
  void isolationNeedsAPartitionableEnsembleAndAFollower() throws Exception {
    try (ZooKeeperEnsemble plain = ZooKeeperEnsemble.start(3, TICK)) {
      assertThat(plain.isPartitionable()).isFalse();
      assertThatThrownBy(() -> plain.isolateFromLeader(0)).isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("startPartitionable");
      assertThatThrownBy(() -> plain.isolateFromLeader(plain.leader())).isInstanceOf(IllegalStateException.class);
    }
  }

  private static ZooKeeper connect(ZooKeeperEnsemble ensemble, int member) throws Exception {
    CountDownLatch connected = new CountDownLatch(1);
    ZooKeeper zk = new ZooKeeper(ensemble.host() + ":" + ensemble.port(member), 4_000, event -> {
      if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
        connected.countDown();
      }
    });
    if (!connected.await(10, TimeUnit.SECONDS)) {
      zk.close();
      throw new IllegalStateException("member " + member + " did not accept a session");
    }
    return zk;
  }

  private static CompletableFuture<Integer> sync(ZooKeeper zk) {
    CompletableFuture<Integer> rc = new CompletableFuture<>();
    zk.sync("/", (code, path, ctx) -> rc.complete(code), null);
    return rc;
  }
}
