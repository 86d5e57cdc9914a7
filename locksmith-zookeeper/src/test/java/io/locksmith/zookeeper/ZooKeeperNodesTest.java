package io.locksmith.zookeeper;

import static io.locksmith.tck.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.DistributedLock;
import io.locksmith.Lease;
import io.locksmith.testkit.zookeeper.ZooKeeperExtension;
import io.locksmith.testkit.zookeeper.ZooKeeperTestServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The nodes behind the locks (issue 14, "Nodes" and "Waiting"): one container parent per name, one
 * ephemeral-sequential protected node per acquisition, tokens from its czxid, waiters that give up leave
 * the queue, and each waiter watches only its predecessor.
 */
class ZooKeeperNodesTest {
  @RegisterExtension
  static final ZooKeeperExtension<ZooKeeperTestServer> ZK = ZooKeeperExtension.sharedServer();

  private final List<ZooKeeperLockClient> clients = new ArrayList<>();
  private RawZooKeeper raw;
  private String name;

  @BeforeEach
  void setUp(TestInfo info) {
    raw = new RawZooKeeper(ZK.get().connectString());
    name = "nodes/" + info.getTestMethod().orElseThrow().getName() + "/" + Long.toHexString(System.nanoTime());
  }

  @AfterEach
  void tearDown() {
    clients.forEach(ZooKeeperLockClient::close);
    raw.close();
  }

  private ZooKeeperLockClient client() {
    ZooKeeperLockClient c = ZooKeeperLockClient.create(ZK.get().uri());
    clients.add(c);
    return c;
  }

  private String parent(ZooKeeperLockClient c, Side side) {
    return c.backend.parent(side, name);
  }

  @Test
  void aLockIsAParentWithOneProtectedEphemeralSequentialNodePerAcquisition() throws Exception {
    ZooKeeperLockClient a = client();
    String parent = parent(a, Side.EXCLUSIVE);
    assertThat(parent).isEqualTo("/locksmith/lock/" + NodeNames.encode(name)).contains("nodes%2F");
    try (Lease lease = a.lock(name).acquire()) {
      List<String> children = raw.children(parent);
      assertThat(children).hasSize(1);
      String node = children.get(0);
      assertThat(node).matches("x\\." + java.util.regex.Pattern.quote(a.clientId()) + "\\.[A-Za-z0-9_-]{12}\\.\\d{10}");
      Stat stat = raw.stat(parent + "/" + node);
      assertThat(stat.getEphemeralOwner()).as("ephemeral, owned by the client's session")
          .isEqualTo(a.backend.currentSession());
      assertThat(lease.fencingToken()).as("the token is the node's creation zxid").isEqualTo(stat.getCzxid());
      String data = new String(raw.data(parent + "/" + node), StandardCharsets.UTF_8);
      assertThat(data.split("\n")[0]).as("the node names its owner").startsWith(a.clientId() + ":");
    }
    assertThat(raw.children(parent)).as("released: the node is gone").isEmpty();
  }

  @Test
  void namesWithSlashesAndDotsStayInsideTheirOwnParent() throws Exception {
    ZooKeeperLockClient a = client();
    String base = name;
    List<String> tricky = List.of(base + "/../escape", "..", ".", base + "/./x", base + "//y", base + "%2Fz");
    List<Lease> leases = new ArrayList<>();
    for (String n : tricky) {
      leases.add(a.lock(n).tryAcquire().orElseThrow());
    }
    List<String> parents = raw.children("/locksmith/lock");
    for (String n : tricky) {
      assertThat(parents).as("one parent of its own for '%s'", n).contains(NodeNames.encode(n));
      assertThat(raw.children("/locksmith/lock/" + NodeNames.encode(n))).hasSize(1);
    }
    assertThat(raw.stat("/locksmith/escape")).as("nothing outside the kind directory").isNull();
    leases.forEach(Lease::release);
  }

  @Test
  void waitersThatGiveUpDeleteTheirNodes() throws Exception {
    ZooKeeperLockClient a = client();
    ZooKeeperLockClient b = client();
    ZooKeeperLockClient c = ZooKeeperLockClient.create(ZK.get().uri());
    String parent = parent(a, Side.EXCLUSIVE);
    Lease held = a.lock(name).acquire();

    assertThat(b.lock(name).tryAcquire(Duration.ofMillis(300))).as("timed out").isEmpty();
    // the call returns when its wait runs out; the delete follows at once, in the background (the core
    // sends it after any round still in flight, so that round cannot register the waiter again)
    assertThat(eventually(Duration.ofSeconds(5), () -> raw.children(parent).size() == 1))
        .as("after a timeout: the holder's node only").isTrue();

    CompletableFuture<Lease> cancelled = b.lock(name).acquireAsync(Duration.ofSeconds(30)).toCompletableFuture();
    assertThat(eventually(Duration.ofSeconds(5), () -> raw.children(parent).size() == 2)).isTrue();
    cancelled.cancel(false);
    assertThat(eventually(Duration.ofSeconds(5), () -> raw.children(parent).size() == 1)).as("after a cancel").isTrue();

    AtomicReference<Throwable> interrupted = new AtomicReference<>();
    DistributedLock lock = b.lock(name);
    Thread waiter = new Thread(() -> {
      try {
        lock.lockInterruptibly();
      } catch (Throwable e) {
        interrupted.set(e);
      }
    });
    waiter.start();
    assertThat(eventually(Duration.ofSeconds(5), () -> raw.children(parent).size() == 2)).isTrue();
    waiter.interrupt();
    waiter.join(10_000);
    assertThat(interrupted.get()).isInstanceOf(InterruptedException.class);
    assertThat(eventually(Duration.ofSeconds(5), () -> raw.children(parent).size() == 1)).as("after an interrupt").isTrue();

    CompletableFuture<Lease> closing = c.lock(name).acquireAsync(Duration.ofSeconds(30)).toCompletableFuture();
    assertThat(eventually(Duration.ofSeconds(5), () -> raw.children(parent).size() == 2)).isTrue();
    c.close();
    assertThat(closing).isCompletedExceptionally();
    assertThat(raw.children(parent)).as("after the waiter's client closed").hasSize(1);
    held.release();
    assertThat(raw.children(parent)).isEmpty();
  }

  /**
   * No herd: each waiter watches only the node just ahead of it, so the server holds one watch per
   * waiter, on distinct nodes, and a release fires one watch and wakes one waiter.
   */
  @Test
  void eachWaiterWatchesOnlyItsPredecessorAndAReleaseWakesOne() throws Exception {
    ZooKeeperLockClient a = client();
    ZooKeeperLockClient b = client();
    String parent = parent(a, Side.EXCLUSIVE);
    Lease held = a.lock(name).acquire();
    int waiters = 10;
    List<CompletableFuture<Lease>> queued = new ArrayList<>();
    for (int i = 0; i < waiters; i++) {
      queued.add((i % 2 == 0 ? a : b).lock(name).acquireAsync(Duration.ofSeconds(30)).toCompletableFuture());
      int expected = i + 2;
      assertThat(eventually(Duration.ofSeconds(5), () -> raw.children(parent).size() == expected)).isTrue();
    }
    assertThat(eventually(Duration.ofSeconds(5), () -> watches(parent).size() == waiters)).isTrue();
    Map<String, Integer> before = watches(parent);
    assertThat(before.values()).as("one watcher per watched node").allMatch(n -> n == 1);
    assertThat(before).as("nobody watches the parent's children").doesNotContainKey(parent);
    List<String> nodes = NodeNames.queue(raw.children(parent)).stream().map(NodeNames.Node::name).toList();
    assertThat(before.keySet()).as("the holder and every waiter but the last are watched")
        .containsExactlyInAnyOrderElementsOf(nodes.subList(0, waiters).stream().map(n -> parent + "/" + n).toList());

    long fired = deletedWatchesFired();
    long wakeups = a.backend.wakeups() + b.backend.wakeups();
    long listings = childrenListings();
    held.release();
    CompletableFuture.anyOf(queued.toArray(new CompletableFuture<?>[0])).get(10, TimeUnit.SECONDS);
    assertThat(queued.get(0)).as("the first waiter got it").isDone();
    assertThat(eventually(Duration.ofSeconds(5), () -> watches(parent).size() == waiters - 1)).isTrue();
    assertThat(deletedWatchesFired() - fired).as("watch notifications for the hand-off").isEqualTo(1);
    assertThat(a.backend.wakeups() + b.backend.wakeups() - wakeups).as("waiters woken").isEqualTo(1);
    assertThat(childrenListings() - listings).as("getChildren calls for the hand-off").isEqualTo(1);
    for (int i = 0; i < waiters; i++) {
      queued.get(i).get(10, TimeUnit.SECONDS).release();
    }
  }

  /** {@code wchp}: watched path → number of sessions watching it, for paths under {@code parent}. */
  private static Map<String, Integer> watches(String parent) {
    Map<String, Integer> out = new HashMap<>();
    String path = null;
    for (String line : ZK.get().fourLetterWord("wchp").split("\\R")) {
      if (line.startsWith("/")) {
        path = line.trim();
      } else if (!line.isBlank() && path != null && path.startsWith(parent)) {
        out.merge(path, 1, Integer::sum);
      }
    }
    return out;
  }

  /** Watch notifications the server sent for deleted nodes, so far (all servers of this JVM). */
  private static long deletedWatchesFired() {
    return Long.parseLong(ZK.get().metrics().getOrDefault("zk_sum_node_deleted_watch_count", "0"));
  }

  /** getChildren replies the server sent, so far (all servers of this JVM). */
  private static long childrenListings() {
    Map<String, String> m = ZK.get().metrics();
    return Long.parseLong(m.getOrDefault("zk_response_packet_get_children_cache_hits", "0"))
        + Long.parseLong(m.getOrDefault("zk_response_packet_get_children_cache_misses", "0"));
  }
}
