package io.locksmith.zookeeper;

import static io.locksmith.tck.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.BackendConfigurationException;
import io.locksmith.BackendUnavailableException;
import io.locksmith.ClientOptions;
import io.locksmith.Lease;
import io.locksmith.testkit.TcpProxy;
import io.locksmith.testkit.zookeeper.ZooKeeperExtension;
import io.locksmith.testkit.zookeeper.ZooKeeperTestServer;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.retry.RetryNTimes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Bad input and failure (issue 14): malformed settings are refused at build, an unreachable ensemble
 * fails within the connection timeout and never grants, credentials that do not fit fail at create, and
 * close deletes the client's nodes and ends its threads, leaving an application's CuratorFramework open.
 */
class ZooKeeperFailureTest {
  @RegisterExtension
  static final ZooKeeperExtension<ZooKeeperTestServer> ZK = ZooKeeperExtension.sharedServer();

  private static int closedPort() throws Exception {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  @Test
  void malformedSettingsAreRefusedAtBuild() {
    String uri = ZK.get().uri();
    assertThatThrownBy(() -> ZooKeeperLockClient.create("redis://localhost:6379")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ZooKeeperLockClient.create(uri + "/a//b")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("chroot");
    assertThatThrownBy(() -> ZooKeeperLockClient.create(uri + "/a/../b")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ZooKeeperLockClient.builder().uri(uri)
        .options(ClientOptions.builder().namespace("..").build()).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not a valid ZooKeeper path");
    assertThatThrownBy(() -> ZooKeeperLockClient.builder().uri(uri).sessionTimeout(Duration.ofMillis(10)).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("sessionTimeout");
    assertThatThrownBy(() -> ZooKeeperLockClient.builder().uri(uri).connectionTimeout(Duration.ofHours(1)).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("connectionTimeout");
    assertThatThrownBy(() -> ZooKeeperLockClient.builder().build()).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> ZooKeeperLockClient.builder().digest("a:b", "c")).isInstanceOf(IllegalArgumentException.class);
    try (RawZooKeeper raw = new RawZooKeeper(ZK.get().connectString())) {
      assertThatThrownBy(() -> ZooKeeperLockClient.builder().uri(uri).curator(raw.curator).build())
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not both");
    }
    try (ZooKeeperLockClient client = ZooKeeperLockClient.create(uri)) {
      assertThatThrownBy(() -> client.lock("x".repeat(NodeNames.MAX_SEGMENT + 1)))
          .isInstanceOf(IllegalArgumentException.class); // the core's default limit of 512 comes first
    }
    ClientOptions longNames = ClientOptions.builder().maxNameLength(20_000).build();
    try (ZooKeeperLockClient client = ZooKeeperLockClient.builder().uri(uri).options(longNames).build()) {
      String name = "\u00e9".repeat(NodeNames.MAX_SEGMENT / 6 + 1); // 6 characters each when encoded
      assertThatThrownBy(() -> client.lock(name)).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("too long for a ZooKeeper node");
      assertThatThrownBy(() -> client.inspect(name)).isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> client.semaphore(name, 1)).isInstanceOf(IllegalArgumentException.class);
      assertThat(client.lock("x".repeat(NodeNames.MAX_SEGMENT)).tryAcquire()).isPresent().hasValueSatisfying(Lease::release);
    }
  }

  @Test
  void anUnreachableEnsembleFailsCreateWithinTheConnectionTimeout() throws Exception {
    Set<Thread> before = new HashSet<>(Thread.getAllStackTraces().keySet());
    long start = System.nanoTime();
    assertThatThrownBy(() -> ZooKeeperLockClient.builder().uri("zookeeper://127.0.0.1:" + closedPort())
        .connectionTimeout(Duration.ofMillis(700)).build())
        .isInstanceOf(BackendUnavailableException.class).hasMessageContaining("700 ms");
    long elapsed = System.nanoTime() - start;
    // connection timeout 700 ms + closing and scheduling allowance 3 s = 3.7 s
    assertThat(elapsed).as("failed within the connection timeout (plus closing)")
        .isLessThan(TimeUnit.MILLISECONDS.toNanos(700 + 3_000));
    assertThat(eventually(Duration.ofSeconds(10), () -> newThreads(before).isEmpty()))
        .as("no thread left behind: %s", newThreads(before)).isTrue();
  }

  @Test
  void anUnknownHostIsAConfigurationError() {
    assertThatThrownBy(() -> ZooKeeperLockClient.create("zookeeper://no-such-host.invalid:2181"))
        .isInstanceOf(BackendConfigurationException.class).hasMessageContaining("no-such-host.invalid");
  }

  @Test
  void credentialsThatDoNotFitFailAtCreate() throws Exception {
    String hostPort = ZK.get().connectString();
    String chroot = "/secured-" + Long.toHexString(System.nanoTime());
    try (ZooKeeperLockClient alice = ZooKeeperLockClient.builder().uri("zookeeper://" + hostPort + chroot)
        .digest("alice", "right").build()) {
      try (Lease lease = alice.lock("guarded").acquire()) {
        assertThat(lease.isHeld()).isTrue();
      }
      assertThatThrownBy(() -> ZooKeeperLockClient.create("zookeeper://alice:wrong@" + hostPort + chroot))
          .isInstanceOf(BackendConfigurationException.class).hasMessageContaining("credentials")
          .satisfies(e -> assertThat(e.getMessage()).doesNotContain("wrong"));
      assertThatThrownBy(() -> ZooKeeperLockClient.create("zookeeper://" + hostPort + chroot))
          .as("no credentials at all").isInstanceOf(BackendConfigurationException.class);
      try (ZooKeeperLockClient again = ZooKeeperLockClient.create("zookeeper://alice:right@" + hostPort + chroot)) {
        assertThat(again.lock("guarded").tryAcquire()).isPresent().hasValueSatisfying(Lease::release);
      }
    }
  }

  /**
   * An ensemble cut off after the client started: a call that does not wait fails with
   * BackendUnavailableException within the connection timeout, a waiting one when its wait runs out; nothing
   * is granted meanwhile, and the client works again once the network heals.
   */
  @Test
  void anEnsembleCutOffFailsAcquisitionInTimeAndNeverGrants() throws Exception {
    try (TcpProxy proxy = TcpProxy.start(ZK.get().host(), ZK.get().port());
        ZooKeeperLockClient client = ZooKeeperLockClient.builder()
            .uri("zookeeper://" + proxy.host() + ":" + proxy.port())
            .connectionTimeout(Duration.ofMillis(400)).build()) {
      // Real time is what these bounds measure: the connection timeout and the caller's wait. Both are short
      // (400 ms, 600 ms) so that the test does not wait long; the allowances cover a loaded machine.
      String name = "cut-off-" + System.nanoTime();
      proxy.blackhole();
      long start = System.nanoTime();
      assertThatThrownBy(() -> client.lock(name).tryAcquire()).isInstanceOf(BackendUnavailableException.class);
      // connection timeout 400 ms + allowance 1 s = 1.4 s
      assertThat(System.nanoTime() - start).as("tryAcquire() failed within the connection timeout")
          .isLessThan(TimeUnit.MILLISECONDS.toNanos(400 + 1_000));
      start = System.nanoTime();
      assertThatThrownBy(() -> client.lock(name).acquire(Duration.ofMillis(600)))
          .isInstanceOf(BackendUnavailableException.class).hasMessageContaining("within 600 ms");
      // not before the wait of 600 ms ran out; at most wait 600 ms + allowance 2 s = 2.6 s
      assertThat(System.nanoTime() - start).as("acquire(0.6 s) failed when its wait ran out")
          .isBetween(TimeUnit.MILLISECONDS.toNanos(600), TimeUnit.MILLISECONDS.toNanos(600 + 2_000));
      CompletableFuture<Optional<Lease>> waiting = client.lock(name).tryAcquireAsync(Duration.ofSeconds(30))
          .toCompletableFuture();
      try (RawZooKeeper raw = new RawZooKeeper(ZK.get().connectString())) {
        assertThat(raw.children(client.backend.parent(Side.EXCLUSIVE, name))).as("nothing reached the server").isEmpty();
        proxy.heal();
        proxy.resetAll(); // the blackholed connections are garbage now
        Lease lease = waiting.get(20, TimeUnit.SECONDS).orElseThrow();
        assertThat(raw.children(client.backend.parent(Side.EXCLUSIVE, name))).as("one node: no orphan of the outage")
            .hasSize(1);
        lease.release();
      }
    }
  }

  @Test
  void closeDeletesTheClientsNodesAndEndsItsThreads() throws Exception {
    Set<Thread> before = new HashSet<>(Thread.getAllStackTraces().keySet());
    String name = "closing-" + System.nanoTime();
    try (RawZooKeeper raw = new RawZooKeeper(ZK.get().connectString());
        ZooKeeperLockClient other = ZooKeeperLockClient.create(ZK.get().uri())) {
      Lease held = other.lock(name).acquire(); // before the snapshot: other's lease timer thread starts here
      Set<Thread> withOther = new HashSet<>(Thread.getAllStackTraces().keySet());
      ZooKeeperLockClient client = ZooKeeperLockClient.create(ZK.get().uri());
      Lease mine = client.lock(name + "-2").acquire();
      CompletableFuture<Lease> waiting = client.lock(name).acquireAsync(Duration.ofSeconds(30)).toCompletableFuture();
      client.semaphore(name, 2).acquire();
      assertThat(eventually(Duration.ofSeconds(5), () -> raw.children(client.backend.parent(Side.EXCLUSIVE, name)).size() == 2))
          .isTrue();
      client.close();
      assertThat(raw.children(client.backend.parent(Side.EXCLUSIVE, name))).as("the waiter's node").hasSize(1);
      assertThat(raw.children(client.backend.parent(Side.EXCLUSIVE, name + "-2"))).as("the held lock's node").isEmpty();
      assertThat(raw.children(client.backend.parent(Side.PERMIT, name))).as("the permit's node").isEmpty();
      assertThat(mine.isHeld()).isFalse();
      assertThat(waiting).isCompletedExceptionally();
      assertThat(eventually(Duration.ofSeconds(10), () -> newThreads(withOther).isEmpty()))
          .as("threads of the closed client left: %s", newThreads(withOther)).isTrue();
      held.release();
    }
    assertThat(eventually(Duration.ofSeconds(10), () -> newThreads(before).isEmpty())).isTrue();
  }

  @Test
  void anApplicationsCuratorFrameworkIsUsedAndLeftOpen() throws Exception {
    String name = "app-curator-" + System.nanoTime();
    CuratorFramework app = CuratorFrameworkFactory.builder().connectString(ZK.get().connectString())
        .namespace("app").sessionTimeoutMs(10_000).connectionTimeoutMs(5_000).retryPolicy(new RetryNTimes(3, 100)).build();
    try (RawZooKeeper raw = new RawZooKeeper(ZK.get().connectString())) {
      ZooKeeperLockClient client = ZooKeeperLockClient.builder().curator(app).build();
      assertThat(app.getState()).as("started by the lock client").isEqualTo(CuratorFrameworkState.STARTED);
      String parent = "/app" + client.backend.parent(Side.EXCLUSIVE, name); // under the application's namespace
      Lease held = client.lock(name).acquire();
      ZooKeeperLockClient other = ZooKeeperLockClient.create(ZK.get().uri() + "/app");
      Lease blocker = other.lock(name + "-w").acquire(Duration.ofSeconds(5));
      CompletableFuture<Lease> waiting = client.lock(name + "-w").acquireAsync(Duration.ofSeconds(30)).toCompletableFuture();
      assertThat(raw.children(parent)).hasSize(1);
      assertThat(eventually(Duration.ofSeconds(5), () -> raw.children(parent + "-w").size() == 2)).isTrue();
      client.close();
      assertThat(held.isHeld()).isFalse();
      assertThat(raw.children(parent)).as("released at close").isEmpty();
      assertThat(raw.children(parent + "-w")).as("the waiter left the queue at close").hasSize(1);
      assertThat(waiting).isCompletedExceptionally();
      assertThat(app.getState()).as("the application's framework stays open").isEqualTo(CuratorFrameworkState.STARTED);
      assertThat(app.checkExists().forPath("/")).isNotNull();
      blocker.release();
      other.close();
    } finally {
      app.close();
    }
  }

  private static List<String> newThreads(Set<Thread> before) {
    return Thread.getAllStackTraces().keySet().stream().filter(t -> !before.contains(t) && t.isAlive())
        .map(Thread::getName).filter(n -> !n.startsWith("ForkJoinPool.commonPool")).sorted().toList();
  }
}
