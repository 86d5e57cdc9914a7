package io.locksmith.zookeeper;

import static io.locksmith.tck.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.BackendUnavailableException;
import io.locksmith.Lease;
import io.locksmith.testkit.TcpProxy;
import io.locksmith.testkit.zookeeper.ZooKeeperExtension;
import io.locksmith.testkit.zookeeper.ZooKeeperTestServer;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Protected mode (issue 14, "Nodes"): a create whose reply does not arrive in time may still have been
 * applied. The next attempt of the same acquisition finds that node by its client-unique prefix and
 * continues with it, instead of creating a second node and leaving the first as an orphan that would
 * block the lock for as long as the session lives.
 */
class ZooKeeperProtectedModeTest {
  /**
   * A server of the class's own that reaps empty containers only once an hour: the cases release a lock
   * and then count on its parent still being there, so that the delayed create is one request. On the
   * shared server the reaper (every minute) sometimes deleted the parent in between; the create then had
   * to re-make the parents first, four delayed round trips that outlasted the wait (seen in 3 of 11 runs
   * of the module: parent re-created with child version 0, no child after 10 s).
   */
  @RegisterExtension
  static final ZooKeeperExtension<ZooKeeperTestServer> ZK = ZooKeeperExtension.server(
      () -> ZooKeeperTestServer.builder().containerCheckInterval(Duration.ofHours(1)).start());

  @Test
  void aCreateWhoseReplyCameTooLateIsAdoptedNotOrphaned() throws Exception {
    String name = "protected-" + System.nanoTime();
    try (TcpProxy proxy = TcpProxy.start(ZK.get().host(), ZK.get().port());
        ZooKeeperLockClient client = ZooKeeperLockClient.builder().uri("zookeeper://" + proxy.host() + ":" + proxy.port())
            .connectionTimeout(Duration.ofMillis(500)).build();
        ZooKeeperLockClient other = ZooKeeperLockClient.create(ZK.get().uri());
        RawZooKeeper raw = new RawZooKeeper(ZK.get().connectString())) {
      String parent = client.backend.parent(Side.EXCLUSIVE, name);
      client.lock(name).acquire().release(); // the parent exists now: the create below is one request
      // every request now reaches the server after 0.8 s and its reply comes 0.8 s later: the create is
      // applied, but its caller gives up after 0.5 s
      proxy.delay(Duration.ofMillis(800));
      CompletableFuture<Optional<Lease>> acquiring = client.lock(name).tryAcquireAsync(Duration.ofSeconds(30))
          .toCompletableFuture();
      assertThat(eventually(Duration.ofSeconds(10), () -> raw.children(parent).size() == 1))
          .as("the create reached the server").isTrue();
      String applied = raw.children(parent).get(0);
      assertThat(eventually(Duration.ofSeconds(10), () -> client.backend.uncertainCreates() > 0))
          .as("the client gave up on the create's reply").isTrue();
      proxy.delay(Duration.ZERO);
      Lease lease = acquiring.get(30, TimeUnit.SECONDS).orElseThrow();
      List<String> nodes = raw.children(parent);
      assertThat(nodes).as("one node: the late create was adopted").containsExactly(applied);
      assertThat(lease.fencingToken()).as("the adopted node's czxid").isEqualTo(raw.stat(parent + "/" + applied).getCzxid());
      assertThat(other.lock(name).tryAcquire()).as("held").isEmpty();
      lease.release();
      assertThat(raw.children(parent)).as("nothing left behind").isEmpty();
      assertThat(other.lock(name).tryAcquire()).as("free for another client").isPresent()
          .hasValueSatisfying(Lease::release);
    }
  }

  /**
   * A call that does not wait gives up on a create whose reply is late: the node the server did create is
   * deleted (by the give-back that follows an unanswered attempt, or by the late reply itself), so it
   * does not block the lock for the life of the session.
   */
  @Test
  void aNodeCreatedAfterItsCallerGaveUpIsDeleted() throws Exception {
    String name = "late-" + System.nanoTime();
    try (TcpProxy proxy = TcpProxy.start(ZK.get().host(), ZK.get().port());
        ZooKeeperLockClient client = ZooKeeperLockClient.builder().uri("zookeeper://" + proxy.host() + ":" + proxy.port())
            .connectionTimeout(Duration.ofMillis(500)).build();
        ZooKeeperLockClient other = ZooKeeperLockClient.create(ZK.get().uri());
        RawZooKeeper raw = new RawZooKeeper(ZK.get().connectString())) {
      String parent = client.backend.parent(Side.EXCLUSIVE, name);
      client.lock(name).acquire().release();
      // the parent's child version counts every create and delete under it: unlike a listing, it cannot
      // miss a node that exists only briefly (a loaded machine may not poll inside that window)
      int before = raw.stat(parent).getCversion();
      proxy.delay(Duration.ofMillis(800));
      assertThatThrownBy(() -> client.lock(name).tryAcquire()).isInstanceOf(BackendUnavailableException.class);
      assertThat(eventually(Duration.ofSeconds(10), () -> cversion(raw, parent) > before))
          .as("the create reached the server after its caller gave up (child version %d, now %d, children %s)",
              before, cversion(raw, parent), raw.children(parent))
          .isTrue();
      proxy.delay(Duration.ZERO);
      assertThat(eventually(Duration.ofSeconds(10), () -> raw.children(parent).isEmpty()))
          .as("and its node was deleted").isTrue();
      assertThat(other.lock(name).tryAcquire()).isPresent().hasValueSatisfying(Lease::release);
    }
  }

  /** @return the child version of {@code parent}, or -1 if it is gone */
  private static int cversion(RawZooKeeper raw, String parent) {
    Stat stat = raw.stat(parent);
    return stat == null ? -1 : stat.getCversion();
  }
}
