package io.locksmith.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.ClientOptions;
import io.locksmith.Lease;
import io.locksmith.testkit.zookeeper.ZooKeeperExtension;
import io.locksmith.testkit.zookeeper.ZooKeeperTestServer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 23, item 20: with credentials, every node the client creates (chroot, kind directories, lock
 * parents, lock nodes) is readable and writable by that user alone, so a client without them cannot
 * delete a lock node and steal the lock; one with them can (an operator's force-unlock).
 */
class ZooKeeperAclTest {
  @RegisterExtension
  static final ZooKeeperExtension<ZooKeeperTestServer> ZK = ZooKeeperExtension.sharedServer();

  private static CuratorFramework raw(String user, String password) {
    CuratorFrameworkFactory.Builder b = CuratorFrameworkFactory.builder().connectString(ZK.get().connectString())
        .retryPolicy(new RetryNTimes(3, 100));
    if (user != null) {
      b.authorization("digest", (user + ":" + password).getBytes(StandardCharsets.UTF_8));
    }
    CuratorFramework c = b.build();
    c.start();
    return c;
  }

  @Test
  void aLockNodeOfAnAuthenticatedClientIsClosedToStrangers() throws Exception {
    String chroot = "/acl-" + Long.toHexString(System.nanoTime());
    String name = "guarded";
    try (ZooKeeperLockClient alice = ZooKeeperLockClient.builder().uri("zookeeper://" + ZK.get().connectString() + chroot)
        .digest("alice", "secret").build();
        CuratorFramework stranger = raw(null, null);
        CuratorFramework mallory = raw("mallory", "other");
        CuratorFramework operator = raw("alice", "secret")) {
      Lease lease = alice.lock(name).acquire();
      String parent = alice.backend.parent(Side.EXCLUSIVE, name);
      String node = parent + "/" + operator.getChildren().forPath(parent).get(0);
      for (String path : List.of(chroot, parent.substring(0, parent.lastIndexOf('/')), parent, node)) {
        List<ACL> acl = operator.getACL().forPath(path);
        assertThat(acl).as("ACL of %s", path).singleElement()
            .satisfies(a -> assertThat(a.getId().getScheme()).isEqualTo("digest"))
            .satisfies(a -> assertThat(a.getPerms()).isEqualTo(ZooDefs.Perms.ALL));
      }
      assertThatThrownBy(() -> stranger.delete().forPath(node)).as("no credentials: the lock node cannot be deleted")
          .isInstanceOf(KeeperException.NoAuthException.class);
      assertThatThrownBy(() -> mallory.delete().forPath(node)).as("another user: the lock node cannot be deleted")
          .isInstanceOf(KeeperException.NoAuthException.class);
      assertThatThrownBy(() -> stranger.create().forPath(parent + "/x.intruder.key.0000000000"))
          .as("nor can a stranger queue in front").isInstanceOf(KeeperException.NoAuthException.class);
      assertThat(lease.isHeld()).isTrue();
      operator.delete().forPath(node); // the same credentials may (an operator's force-unlock)
      assertThat(operator.checkExists().forPath(node)).isNull();
      lease.release();
    }
  }

  /**
   * An application's {@code CuratorFramework} that authenticates, with Curator's default ACL provider
   * (world-open): the lock client's nodes were world-open, so any client could delete a holder's node and
   * be granted. They are now closed to everyone but the authenticated user.
   */
  @Test
  void anAuthenticatedApplicationFrameworksLockNodesAreClosedToStrangers() throws Exception {
    String namespace = "acl-app-" + Long.toHexString(System.nanoTime());
    try (CuratorFramework app = raw("alice", "secret");
        CuratorFramework stranger = raw(null, null);
        ZooKeeperLockClient alice = ZooKeeperLockClient.builder().curator(app)
            .options(ClientOptions.builder().namespace(namespace).build()).build()) {
      Lease lease = alice.lock("guarded").acquire();
      String parent = alice.backend.parent(Side.EXCLUSIVE, "guarded");
      String node = parent + "/" + app.getChildren().forPath(parent).get(0);
      assertThatThrownBy(() -> stranger.delete().forPath(node)).as("no credentials: the lock node cannot be deleted")
          .isInstanceOf(KeeperException.NoAuthException.class);
      assertThatThrownBy(() -> stranger.create().forPath(parent + "/x.intruder.key.0000000000"))
          .as("nor can a stranger queue in front").isInstanceOf(KeeperException.NoAuthException.class);
      assertThat(lease.isHeld()).isTrue();
      lease.release();
    }
  }

  /** nodeAcl(...) replaces the default: here the creator's rights plus read access for everyone (monitoring). */
  @Test
  void aChosenNodeAclIsAppliedAndAnEmptyOneRefused() throws Exception {
    String chroot = "/acl-chosen-" + Long.toHexString(System.nanoTime());
    List<ACL> acl = new java.util.ArrayList<>(ZooDefs.Ids.CREATOR_ALL_ACL);
    acl.addAll(ZooDefs.Ids.READ_ACL_UNSAFE);
    try (ZooKeeperLockClient alice = ZooKeeperLockClient.builder().uri("zookeeper://" + ZK.get().connectString() + chroot)
        .digest("alice", "secret").nodeAcl(acl).build();
        CuratorFramework stranger = raw(null, null)) {
      Lease lease = alice.lock("watched").acquire();
      String parent = alice.backend.parent(Side.EXCLUSIVE, "watched");
      String node = parent + "/" + stranger.getChildren().forPath(parent).get(0);
      assertThat(stranger.getData().forPath(node)).as("readable by everyone").isNotEmpty();
      assertThat(stranger.getACL().forPath(node)).extracting(a -> a.getId().getScheme() + ":" + a.getPerms())
          .containsExactlyInAnyOrder("digest:" + ZooDefs.Perms.ALL, "world:" + ZooDefs.Perms.READ);
      assertThatThrownBy(() -> stranger.delete().forPath(node)).isInstanceOf(KeeperException.NoAuthException.class);
      lease.release();
    }
    assertThatThrownBy(() -> ZooKeeperLockClient.builder().uri("zookeeper://" + ZK.get().connectString())
        .nodeAcl(List.of()).build()).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("nodeAcl");
  }
}
