package io.locksmith.redis;

import static io.locksmith.tck.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisCredentials;
import io.lettuce.core.RedisURI;
import io.locksmith.BackendUnavailableException;
import io.locksmith.ClientOptions;
import io.locksmith.Lease;
import io.locksmith.LeaseState;
import io.locksmith.LockOptions;
import io.locksmith.testkit.RedisCluster;
import io.locksmith.testkit.RedisServer;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The Redis backend on a real Redis Cluster (3 masters, 3 replicas, Redis 6.2: classic pub/sub): where
 * locks land, wake-ups across slots, per-slot renewal batches, a slot migration under a waiter, replica
 * acknowledgement routed to the slot's master, and connecting. Failovers are in
 * {@link RedisClusterFailoverTest}. Each test uses its own namespace, so tests do not see each other's keys.
 *
 * <p>Figures are printed to stdout with the prefix {@code [cluster]}.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisClusterTest {
  private static RedisCluster cluster;
  private final List<RedisLockClient> clients = new ArrayList<>();

  @BeforeAll
  static void startCluster() {
    cluster = RedisCluster.start();
  }

  @AfterAll
  static void stopCluster() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @AfterEach
  void closeClients() {
    for (RedisLockClient c : clients) {
      c.close();
    }
    clients.clear();
    cluster.nodes().forEach(RedisServer::resume); // a test that paused a node and failed
  }

  @Test
  void aThousandLockNamesLandOnAllThreeMasters() throws Exception {
    RedisLockClient c = client("spread");
    List<Lease> leases = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      leases.add(c.lock("order-" + i, LockOptions.fixed(Duration.ofSeconds(60))).tryAcquire().orElseThrow());
    }
    // what the masters hold: lock hashes of this namespace (the fence keys end in ":fence", not "}")
    Map<RedisServer, Integer> held = new LinkedHashMap<>();
    for (RedisServer master : cluster.masters()) {
      String keys = master.command("KEYS", "spread:lock:{*}");
      held.put(master, keys.isBlank() ? 0 : keys.split("\\R").length);
    }
    // where the slot map says they belong
    Map<RedisServer, Integer> expected = new HashMap<>();
    Map<Integer, RedisServer> owners = new HashMap<>();
    for (int i = 0; i < 1000; i++) {
      int slot = RedisCluster.slot(key(c, "order-" + i));
      expected.merge(owners.computeIfAbsent(slot, cluster::masterForSlot), 1, Integer::sum);
    }
    System.out.printf("[cluster] 1000 lock names per master: %s%n", held.values());
    assertThat(held).hasSize(3);
    assertThat(held.values()).allSatisfy(n -> assertThat(n).as("locks on one master").isGreaterThan(250));
    assertThat(held.values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(1000);
    assertThat(held).containsExactlyInAnyOrderEntriesOf(expected);
    for (Lease lease : leases) {
      assertThat(lease.release()).isTrue();
    }
    for (RedisServer master : cluster.masters()) {
      assertThat(master.command("KEYS", "spread:lock:{*}")).isBlank();
    }
  }

  @Test
  void waitersOnLocksInDifferentSlotsAreWokenByTheRelease() throws Exception {
    RedisLockClient holder = client("wake");
    RedisLockClient waiter = client("wake");
    // two lock names per master, so the waits span six slots on three nodes
    List<String> names = new ArrayList<>();
    for (RedisServer master : cluster.masters()) {
      names.add(nameOn(holder, master, "a-"));
      names.add(nameOn(holder, master, "b-"));
    }
    List<Lease> held = new ArrayList<>();
    for (String name : names) {
      held.add(holder.lock(name, LockOptions.watched(Duration.ofSeconds(30))).acquire(Duration.ofSeconds(5)));
    }
    List<CompletableFuture<Long>> grantedAt = new ArrayList<>();
    for (String name : names) {
      grantedAt.add(acquireLater(waiter, name, Duration.ofSeconds(30)));
    }
    for (String name : names) {
      assertThat(eventually(Duration.ofSeconds(5), () -> holder.inspect(name).map(i -> i.waiters() == 1)
          .orElse(false))).as("waiter of %s registered", name).isTrue();
    }
    List<Long> handOffMillis = new ArrayList<>();
    for (int i = 0; i < names.size(); i++) {
      assertThat(grantedAt.get(i)).as("still waiting for %s", names.get(i)).isNotDone();
      long releasedAt = System.nanoTime();
      assertThat(held.get(i).release()).isTrue();
      handOffMillis.add(TimeUnit.NANOSECONDS.toMillis(grantedAt.get(i).get(10, TimeUnit.SECONDS) - releasedAt));
    }
    System.out.printf("[cluster] release -> waiter in another client granted, six slots on three masters:"
        + " %s ms (backstop %d ms)%n", handOffMillis, RedisLockClient.DEFAULT_WAITER_RECHECK.toMillis());
    // the holders' leases are 30 s and the backstop 5 s: only a wake-up message explains these
    assertThat(handOffMillis).allSatisfy(ms -> assertThat(ms).as("hand-off (ms)").isLessThan(1_000));
  }

  @Test
  void renewalsAreBatchedPerSlot() throws Exception {
    RedisLockClient c = client("renew");
    // two names whose keys share a slot, and fifty in other slots
    Map<Integer, String> bySlot = new HashMap<>();
    String[] pair = null;
    for (int i = 0; pair == null; i++) {
      String name = "pair-" + i;
      String other = bySlot.putIfAbsent(RedisCluster.slot(key(c, name)), name);
      if (other != null) {
        pair = new String[] {other, name};
      }
    }
    List<Lease> leases = new ArrayList<>();
    // renewed every ~667 ms: with 900 ms (every 300 ms) a 600 ms stall of a loaded host let a lease lapse,
    // failing the last check for a reason other than a refused renewal
    LockOptions watched = LockOptions.watched(Duration.ofSeconds(2));
    for (String name : pair) {
      leases.add(c.lock(name, watched).acquire(Duration.ofSeconds(5)));
    }
    for (int i = 0; i < 50; i++) {
      leases.add(c.lock("spread-" + i, watched).acquire(Duration.ofSeconds(5)));
    }
    RedisServer pairMaster = cluster.masterForSlot(RedisCluster.slot(key(c, pair[0])));
    boolean pairRenewedInOneCall = false;
    int pairRenewals = 0;
    try (RedisMonitor monitor = new RedisMonitor(pairMaster.host(), pairMaster.port())) {
      // watch until the pair was renewed together in two rounds (~1.3 s); 10 s is only a failure deadline
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      String line;
      while (pairRenewals < 2 && System.nanoTime() < until && (line = monitor.next(1_000)) != null) {
        if (line.toLowerCase(java.util.Locale.ROOT).contains("\"evalsha\" \"" + RedisScript.RENEW_LOCK.sha + "\"")) {
          // "EVALSHA" "<sha>" "<n>" "<key 1>" ... "<key n>" "<owner 1>" "<lease 1>" ...
          String[] args = line.substring(line.indexOf('"') + 1, line.lastIndexOf('"')).split("\" \"");
          int n = Integer.parseInt(args[2]);
          List<String> renewed = List.of(args).subList(3, 3 + n);
          assertThat(renewed.stream().map(RedisCluster::slot).distinct()).as("slots of one renewal call: %s", line)
              .hasSize(1);
          if (renewed.containsAll(List.of(key(c, pair[0]), key(c, pair[1])))) {
            pairRenewedInOneCall = true;
            pairRenewals++;
          }
        }
      }
    }
    assertThat(pairRenewedInOneCall).as("the two same-slot leases were renewed by one script call").isTrue();
    // nothing was refused (CROSSSLOT would have made the leases UNCERTAIN, then LOST)
    assertThat(leases).allSatisfy(l -> assertThat(l.state()).as(l.lockName()).isEqualTo(LeaseState.HELD));
    for (Lease lease : leases) {
      assertThat(lease.release()).isTrue();
    }
  }

  @Test
  void aSlotMigrationUnderAWaiterLeavesNothingStuck() throws Exception {
    RedisLockClient holder = client("migrate");
    RedisLockClient waiter = client("migrate");
    RedisLockClient other = client("migrate");
    List<RedisServer> masters = cluster.masters();
    RedisServer from = masters.get(0);
    RedisServer to = masters.get(1);
    String name = nameOn(holder, from, "moving-");
    int slot = RedisCluster.slot(key(holder, name));
    Lease held = holder.lock(name, LockOptions.watched(Duration.ofSeconds(30))).acquire(Duration.ofSeconds(5));
    CompletableFuture<Long> grantedAt = acquireLater(waiter, name, Duration.ofSeconds(30));
    assertThat(eventually(Duration.ofSeconds(5), () -> holder.inspect(name).map(i -> i.waiters() == 1)
        .orElse(false))).as("waiter registered").isTrue();

    AtomicReference<Long> releasedAt = new AtomicReference<>();
    AtomicReference<Optional<Lease>> intruder = new AtomicReference<>();
    cluster.migrateSlot(slot, from, to, () -> {
      // every key of the slot is on the target, the slot still belongs to the source: -ASK
      assertThat(keysInSlot(from, slot)).isZero();
      assertThat(keysInSlot(to, slot)).isPositive();
      intruder.set(other.lock(name).tryAcquire()); // still held: refused, wherever the keys are
      releasedAt.set(System.nanoTime());
      assertThat(held.release()).isTrue(); // the waiter's next round meets TRYAGAIN until the move ends
    });
    long handOffMillis = TimeUnit.NANOSECONDS.toMillis(grantedAt.get(20, TimeUnit.SECONDS) - releasedAt.get());
    System.out.printf("[cluster] release while its slot was migrating -> waiter granted in %d ms%n",
        handOffMillis);
    assertThat(intruder.get()).as("a held lock stays exclusive during the migration").isEmpty();
    assertThat(handOffMillis).as("hand-off across the migration (ms)")
        .isLessThan(RedisLockClient.DEFAULT_WAITER_RECHECK.toMillis());

    // after the move the clients follow MOVED: the lock lives on the new owner and still wakes waiters
    Lease again = holder.lock(name, LockOptions.watched(Duration.ofSeconds(30))).acquire(Duration.ofSeconds(5));
    assertThat(cluster.masterForSlot(slot)).isSameAs(to);
    assertThat(to.command("EXISTS", key(holder, name))).isEqualTo("1");
    assertThat(keysInSlot(from, slot)).isZero();
    CompletableFuture<Long> second = acquireLater(waiter, name, Duration.ofSeconds(30));
    assertThat(eventually(Duration.ofSeconds(5), () -> holder.inspect(name).map(i -> i.waiters() == 1)
        .orElse(false))).as("waiter registered on the new owner").isTrue();
    long released = System.nanoTime();
    assertThat(again.release()).isTrue();
    assertThat(TimeUnit.NANOSECONDS.toMillis(second.get(10, TimeUnit.SECONDS) - released))
        .as("hand-off after the migration (ms)").isLessThan(1_000);
  }

  @Test
  void replicaAcknowledgementIsAskedOfTheMasterOfTheLocksSlot() throws Exception {
    RedisLockClient c = track(RedisLockClient.builder().uri(clusterUri())
        .options(ClientOptions.builder().namespace("ack").build())
        .replicaAcknowledgement(1, Duration.ofMillis(300), ReplicaAckPolicy.REQUIRE).build());
    RedisServer master = cluster.masters().get(0);
    RedisServer elsewhere = cluster.masters().get(1);
    String name = nameOn(c, master, "acked-");
    Lease lease = c.lock(name).acquire(Duration.ofSeconds(5));
    assertThat(lease.replicasAcknowledged()).hasValue(1);
    assertThat(lease.release()).isTrue();

    // WAIT counts the replicas of the connection that carried the grant; sent anywhere else it would
    // count replicas that have nothing new to confirm and answer 1 at once
    RedisServer replica = cluster.replicasOf(master).get(0);
    String unconfirmed = nameOn(c, master, "unconfirmed-");
    String other = nameOn(c, elsewhere, "elsewhere-");
    replica.pause();
    try {
      // the wait only retries what cannot succeed while the replica is paused: 1 s covers several attempts
      assertThatThrownBy(() -> c.lock(unconfirmed).acquire(Duration.ofSeconds(1)))
          .isInstanceOf(BackendUnavailableException.class).hasMessageContaining("0 of 1");
      assertThat(master.command("EXISTS", key(c, unconfirmed))).as("the grant was given back").isEqualTo("0");
      Lease onOther = c.lock(other).acquire(Duration.ofSeconds(5));
      assertThat(onOther.replicasAcknowledged()).hasValue(1);
      assertThat(onOther.release()).isTrue();
    } finally {
      replica.resume();
    }
  }

  @Test
  void seedsThatDoNotAnswerFailTheBuildAsUnavailable() throws Exception {
    String dead = "127.0.0.1:" + freePort();
    long start = System.nanoTime();
    assertThatThrownBy(() -> RedisLockClient.builder().uri("redis-cluster://" + dead)
        .commandTimeout(Duration.ofMillis(500)).build())
        .isInstanceOf(BackendUnavailableException.class)
        .hasMessageContaining("redis-cluster://" + dead);
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));

    // one dead seed is fine while another answers; the description lists the seeds, not the masters
    String live = cluster.seedUri().substring("redis://".length());
    RedisLockClient c = track(RedisLockClient.create("redis-cluster://" + dead + "," + live));
    assertThat(c.serverDescription()).isEqualTo("redis-cluster://" + dead + "," + live);
    assertThat(c.lock("via-second-seed").tryAcquire().orElseThrow().release()).isTrue();
  }

  @Test
  void clusterUrisAreValidatedAndNeverShowCredentials() {
    List<RedisURI> seeds = RedisLockClient.parseClusterUri("redis-cluster://locker:s3cret@h1:7000,h2");
    assertThat(seeds).hasSize(2);
    assertThat(seeds.get(0).getPort()).isEqualTo(7000);
    assertThat(seeds.get(1).getPort()).isEqualTo(6379);
    assertThat(seeds).allSatisfy(s -> {
      // through the credentials provider: RedisURI.getUsername()/getPassword() are gone in Lettuce 7
      RedisCredentials credentials = s.getCredentialsProvider().resolveCredentials().block();
      assertThat(credentials.getUsername()).isEqualTo("locker");
      assertThat(new String(credentials.getPassword())).isEqualTo("s3cret");
      assertThat(s.isSsl()).isFalse();
    });
    assertThat(RedisClusterConnections.describe(seeds)).isEqualTo("redis-cluster://h1:7000,h2:6379");
    assertThat(RedisLockClient.parseClusterUri("rediss-cluster://h1:7000")).allSatisfy(s ->
        assertThat(s.isSsl()).isTrue());
    for (String bad : List.of("redis-cluster://", "redis-cluster://u:s3cret@h1,,h2", "redis-cluster://h1:7000/1",
        "redis-cluster://u:s3cret@h1?timeout=1s", "redis-cluster://h1:notaport")) {
      assertThatThrownBy(() -> RedisLockClient.builder().uri(bad).build()).as(bad)
          .isInstanceOf(IllegalArgumentException.class)
          .satisfies(e -> assertThat(e.getMessage()).doesNotContain("s3cret"));
    }
  }

  // ------------------------------------------------------------------------------------------------

  private static String clusterUri() {
    return cluster.seedUri().replace("redis://", "redis-cluster://");
  }

  private RedisLockClient client(String namespace) {
    return track(RedisLockClient.builder().uri(clusterUri())
        .options(ClientOptions.builder().namespace(namespace).build()).build());
  }

  private RedisLockClient track(RedisLockClient c) {
    clients.add(c);
    return c;
  }

  /** Starts {@code acquire(wait)} on another thread; completes with the time of the grant. */
  static CompletableFuture<Long> acquireLater(RedisLockClient c, String name, Duration wait) {
    return CompletableFuture.supplyAsync(() -> {
      try {
        Lease lease = c.lock(name).acquire(wait);
        long at = System.nanoTime();
        lease.release();
        return at;
      } catch (InterruptedException e) {
        throw new IllegalStateException(e);
      }
    });
  }

  /** The first name {@code prefix + i} whose lock lives on {@code master}. */
  static String nameOn(RedisCluster cluster, RedisLockClient c, RedisServer master, String prefix) {
    for (int i = 0; i < 10_000; i++) {
      String name = prefix + i;
      if (cluster.masterForSlot(RedisCluster.slot(key(c, name))) == master) {
        return name;
      }
    }
    throw new IllegalStateException("no name found on " + master);
  }

  private static String nameOn(RedisLockClient c, RedisServer master, String prefix) {
    return nameOn(cluster, c, master, prefix);
  }

  private static int keysInSlot(RedisServer node, int slot) {
    return Integer.parseInt(node.command("CLUSTER", "COUNTKEYSINSLOT", Integer.toString(slot)).trim());
  }

  static String key(RedisLockClient c, String name) {
    return new RedisKeys(c.options().namespace()).lock(name);
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
