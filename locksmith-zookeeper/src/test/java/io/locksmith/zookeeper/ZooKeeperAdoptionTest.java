package io.locksmith.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.spi.AcquireMode;
import io.locksmith.spi.AcquireReply;
import io.locksmith.testkit.zookeeper.ZooKeeperExtension;
import io.locksmith.testkit.zookeeper.ZooKeeperTestServer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 23, item 17 (the situation of Curator's CURATOR-498): a node that carries this client's protected
 * prefix but belongs to another session (a previous session of this client that the server has not expired
 * yet, after Curator gave up on it and opened a new one) is not adopted, and a reply about such a node proves
 * nothing about that session: proofs are credited to the session that sent the request.
 */
class ZooKeeperAdoptionTest {
  @RegisterExtension
  static final ZooKeeperExtension<ZooKeeperTestServer> ZK = ZooKeeperExtension.sharedServer();

  /**
   * Another session creates a node with this client's prefix for an owner whose create went unanswered
   * (that is what a create sent in a previous session, applied there, looks like). Adopting it would make
   * the grant live as long as that foreign session: once it ends, the node goes and another client is
   * granted while this one still holds.
   */
  @Test
  void aNodeOfAnotherSessionWithOurPrefixIsNotAdopted() throws Exception {
    String name = "adopt-" + System.nanoTime();
    String owner = "owner-" + System.nanoTime();
    try (ZooKeeperLockClient client = ZooKeeperLockClient.create(ZK.get().uri());
        ZooKeeperLockClient other = ZooKeeperLockClient.create(ZK.get().uri())) {
      Hold hold = client.backend.holdFor(new Hold.Key(Side.EXCLUSIVE, name, owner));
      String foreign;
      long foreignSession;
      try (RawZooKeeper previous = new RawZooKeeper(ZK.get().connectString())) {
        foreign = previous.curator.create().creatingParentContainersIfNeeded().withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
            .forPath(hold.parent + "/" + hold.prefix);
        foreignSession = previous.curator.getZookeeperClient().getZooKeeper().getSessionId();
        synchronized (hold) {
          hold.uncertain = true; // as after a create whose reply was lost: the next round looks for the node by prefix
        }
        AcquireReply reply = client.backend.acquire(name, owner, 60_000, AcquireMode.NEW, null).toCompletableFuture()
            .get(10, TimeUnit.SECONDS);
        assertThat(reply.granted()).as("the lock is free but for the foreign node").isTrue();
        String held;
        synchronized (hold) {
          held = hold.path;
        }
        Stat stat = previous.stat(held);
        assertThat(stat).as("the held node exists").isNotNull();
        assertThat(stat.getEphemeralOwner()).as("the held node belongs to the client's own session, not to %s",
            Long.toHexString(foreignSession)).isEqualTo(client.backend.currentSession());
        assertThat(previous.stat(foreign)).as("the foreign node with our prefix was deleted").isNull();
        assertThat(client.backend.sessions().bound(foreignSession).standing()).as("nothing proven about the foreign session")
            .isEqualTo(Sessions.Standing.UNPROVEN);
      } // the foreign session ends here: had its node been adopted, the lock would now be free
      assertThat(other.lock(name).tryAcquire()).as("another client is refused while the owner holds").isEmpty();
      assertThat(client.backend.release(name, owner, true).toCompletableFuture().get(10, TimeUnit.SECONDS)).isZero();
    }
  }

  /**
   * A reply about a node is never a proof for the node's ephemeral owner: crediting the owner would push
   * a session's deadline out on the strength of another session's request. (A read proves nothing at all,
   * not even for the session that sent it, as a follower cut off from its leader still answers reads: only
   * requests through the leader, a {@code sync} or a create, are credited, and to the sending session.)
   */
  @Test
  void aReplyAboutAStrangersNodeCreditsNothingToItsOwner() throws Exception {
    try (ZooKeeperLockClient client = ZooKeeperLockClient.create(ZK.get().uri());
        RawZooKeeper stranger = new RawZooKeeper(ZK.get().connectString())) {
      String path = stranger.curator.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL)
          .forPath("/adoption-test/" + System.nanoTime());
      long strangerSession = stranger.curator.getZookeeperClient().getZooKeeper().getSessionId();
      Stat stat = new QueueOps(client.backend, Side.EXCLUSIVE, 0).stat(path, "stat a stranger's node")
          .get(10, TimeUnit.SECONDS);
      assertThat(stat.getEphemeralOwner()).isEqualTo(strangerSession);
      assertThat(client.backend.sessions().bound(strangerSession).standing())
          .as("no proof credited to the node's owner, a session this client never spoke in")
          .isEqualTo(Sessions.Standing.UNPROVEN);
    }
  }
}
