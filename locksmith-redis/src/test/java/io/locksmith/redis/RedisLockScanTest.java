package io.locksmith.redis;

import static io.locksmith.tck.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.BackendUnavailableException;
import io.locksmith.ClientOptions;
import io.locksmith.Lease;
import io.locksmith.LockKind;
import io.locksmith.LockScan.End;
import io.locksmith.LockScan.Found;
import io.locksmith.redis.RedisLockScan.ParsedKey;
import io.locksmith.testkit.RedisCluster;
import io.locksmith.testkit.RedisSentinelGroup;
import io.locksmith.testkit.RedisServer;
import io.locksmith.testkit.RedisServerExtension;
import io.locksmith.testkit.SharedTopology;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link RedisLockScan} on real servers: which keys make a lock found, names that are hard to read back
 * (braces, colons, a leading '#'), namespaces matched literally, the limit, and the walk on Sentinel and
 * on every master of a Cluster. Each test uses its own namespace.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisLockScanTest {
  @RegisterExtension
  static final RedisServerExtension REDIS = new RedisServerExtension();
  @RegisterExtension
  static final SharedTopology<RedisCluster> CLUSTER = SharedTopology.cluster();
  @RegisterExtension
  static final SharedTopology<RedisSentinelGroup> SENTINELS = SharedTopology.sentinelGroup();

  private static final Duration BUDGET = Duration.ofSeconds(30);
  /** Names whose keys are easy to misread: colons, braces (digest tag), a suffix-like tail, a '#'. */
  private static final List<String> HARD_NAMES = List.of("plain", "a:b:c", "ends:fence", "x{y}", "x{y}:waiters",
      "#0123456789abcdef", "{#", "naïve-ü");

  private final List<AutoCloseable> open = new ArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    for (AutoCloseable c : open) {
      c.close();
    }
  }

  private RedisLockClient client(String uri, String namespace) {
    RedisLockClient c = RedisLockClient.builder().uri(uri)
        .options(ClientOptions.builder().namespace(namespace).build()).build();
    open.add(c);
    return c;
  }

  private <T extends AutoCloseable> T closeLater(T c) {
    open.add(c);
    return c;
  }

  @Test
  void everyKeyOfEveryKindReadsBackToItsLockAndSuffix() {
    RedisKeys keys = new RedisKeys("scan.ns");
    for (String name : HARD_NAMES) {
      assertThat(RedisLockScan.parse(keys, "scan.ns", keys.lock(name)))
          .contains(new ParsedKey(LockKind.EXCLUSIVE, name, ""));
      assertThat(RedisLockScan.parse(keys, "scan.ns", RedisKeys.fence(keys.lock(name))))
          .contains(new ParsedKey(LockKind.EXCLUSIVE, name, "fence"));
      assertThat(RedisLockScan.parse(keys, "scan.ns", RedisKeys.fairQueue(keys.fairLock(name))))
          .contains(new ParsedKey(LockKind.FAIR, name, "queue"));
      assertThat(RedisLockScan.parse(keys, "scan.ns", keys.semaphore(name)))
          .contains(new ParsedKey(LockKind.SEMAPHORE, name, ""));
      assertThat(RedisLockScan.parse(keys, "scan.ns", keys.readWrite(name)[0]))
          .contains(new ParsedKey(LockKind.READ_WRITE, name, "w"));
    }
    assertThat(RedisLockScan.parse(keys, "scan.ns", "scan.ns:cache:{x}")).isEmpty();
    assertThat(RedisLockScan.parse(keys, "scan.ns", "ns:with:lock:{x}")).isEmpty();
    assertThat(RedisLockScan.parse(keys, "scan.ns", "scan.ns:lock:x")).isEmpty();
    // a digest that does not belong to the name after it is not Locksmith's key
    assertThat(RedisLockScan.parse(keys, "scan.ns", "scan.ns:lock:{#0000000000000000}:x{y}"))
        .isEmpty();
  }

  @Test
  void findsHeldAndWaitedLocksOfEveryKindButNotRetainedTokensOrStoredCounts() throws Exception {
    RedisLockClient locks = client(REDIS.server().uri(), "scan-kinds");
    for (String name : HARD_NAMES) {
      closeLater(locks.lock(name).tryAcquire().orElseThrow());
    }
    Lease fair = closeLater(locks.fairLock("payouts").tryAcquire().orElseThrow());
    closeLater(locks.readWriteLock("ledger").writeLock().tryAcquire().orElseThrow());
    closeLater(locks.readWriteLock("catalog").readLock().tryAcquire().orElseThrow());
    closeLater(locks.semaphore("pool", 2).tryAcquire().orElseThrow());
    // released: only the fence (and the semaphore's stored count) remain
    locks.lock("released").tryAcquire().orElseThrow().release();
    locks.semaphore("idle", 3).tryAcquire().orElseThrow().release();
    // another namespace on the same server is not ours
    client(REDIS.server().uri(), "scan-kinds-other").lock("elsewhere").tryAcquire().orElseThrow();

    io.locksmith.LockScan.Result result = RedisLockScan.locks(locks, 100, BUDGET);

    List<Found> expected = new ArrayList<>();
    HARD_NAMES.stream().sorted().forEach(n -> expected.add(new Found(LockKind.EXCLUSIVE, n)));
    expected.add(new Found(LockKind.FAIR, "payouts"));
    expected.add(new Found(LockKind.READ_WRITE, "catalog"));
    expected.add(new Found(LockKind.READ_WRITE, "ledger"));
    expected.add(new Found(LockKind.SEMAPHORE, "pool"));
    assertThat(result.locks()).containsExactlyElementsOf(expected);
    assertThat(result.end()).isEqualTo(End.FINISHED);
    assertThat(result.traces()).as("the retained tokens and stored counts are Locksmith keys too")
        .isGreaterThan(expected.size() + 2);

    fair.release();
    assertThat(RedisLockScan.locks(locks, 100, BUDGET).locks()).doesNotContain(new Found(LockKind.FAIR, "payouts"));
  }

  @Test
  void aWaiterAloneMakesItsLockFound() throws Exception {
    RedisLockClient holder = client(REDIS.server().uri(), "scan-waiter");
    RedisLockClient waiter = client(REDIS.server().uri(), "scan-waiter");
    Lease held = closeLater(holder.lock("queue").tryAcquire().orElseThrow());
    CompletableFuture<Lease> waiting = waiter.lock("queue").acquireAsync(Duration.ofSeconds(60)).toCompletableFuture();
    assertThat(eventually(Duration.ofSeconds(10), () -> holder.inspect("queue").orElseThrow().waiters() == 1))
        .as("the waiter registered on the server").isTrue();
    assertThat(RedisLockScan.parse(holder.backend.keys(), "scan-waiter",
        RedisKeys.waiters(holder.backend.keys().lock("queue")))).map(ParsedKey::marksActivity).contains(true);
    assertThat(RedisLockScan.locks(holder, 10, BUDGET).locks()).containsExactly(new Found(LockKind.EXCLUSIVE, "queue"));
    held.release();
    closeLater(waiting.get(10, TimeUnit.SECONDS));
  }

  @Test
  void onlyTheNamespacesOwnLockKeysCountAndAnEmptyNamespaceIsToldApart() {
    RedisLockClient mine = client(REDIS.server().uri(), "scan.ns");
    RedisLockClient lookalike = client(REDIS.server().uri(), "scan.ns2");
    closeLater(lookalike.lock("orders").tryAcquire().orElseThrow());
    REDIS.server().command("SET", "scan.ns:cache:{orders}", "not a lock"); // an application's key
    REDIS.server().command("SET", "scan.ns:lock:{orders}:unknown", "not a lock either");
    assertThat(RedisLockScan.locks(mine, 10, BUDGET).locks()).isEmpty();
    io.locksmith.LockScan.Result empty = RedisLockScan.anyKey(mine, BUDGET);
    assertThat(empty.traces()).isZero();
    assertThat(empty.end()).isEqualTo(End.FINISHED);

    mine.lock("orders").tryAcquire().orElseThrow().release(); // leaves the retained token only
    io.locksmith.LockScan.Result used = RedisLockScan.anyKey(mine, BUDGET);
    assertThat(used.traces()).isEqualTo(1);
    assertThat(used.end()).isEqualTo(End.LIMIT_REACHED);
    assertThat(RedisLockScan.locks(mine, 10, BUDGET).locks()).isEmpty();
  }

  @Test
  void stopsAtTheLimitAndSaysSo() {
    RedisLockClient locks = client(REDIS.server().uri(), "scan-limit");
    for (int i = 0; i < 5; i++) {
      closeLater(locks.lock("job-" + i).tryAcquire().orElseThrow());
    }
    io.locksmith.LockScan.Result limited = RedisLockScan.locks(locks, 3, BUDGET);
    assertThat(limited.locks()).hasSize(3);
    assertThat(limited.end()).isEqualTo(End.LIMIT_REACHED);
    io.locksmith.LockScan.Result exact = RedisLockScan.locks(locks, 5, BUDGET);
    assertThat(exact.locks()).hasSize(5);
    assertThat(exact.end()).isEqualTo(End.FINISHED);
    assertThatThrownBy(() -> RedisLockScan.locks(locks, 0, BUDGET)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("limit must be at least 1");
    assertThatThrownBy(() -> RedisLockScan.locks(locks, 1, Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("budget must be positive");
  }

  @Test
  void walksEveryMasterOfACluster() {
    RedisLockClient locks = client(CLUSTER.get().seedUri().replace("redis://", "redis-cluster://"), "scan-cluster");
    List<Found> expected = new ArrayList<>();
    for (int i = 0; i < 30; i++) { // 30 names land on all three masters
      closeLater(locks.lock("job-" + i).tryAcquire().orElseThrow());
      expected.add(new Found(LockKind.EXCLUSIVE, "job-" + i));
    }
    closeLater(locks.fairLock("payouts").tryAcquire().orElseThrow());
    expected.add(new Found(LockKind.FAIR, "payouts"));
    io.locksmith.LockScan.Result result = RedisLockScan.locks(locks, 100, BUDGET);
    assertThat(result.locks()).containsExactlyInAnyOrderElementsOf(expected);
    assertThat(result.end()).isEqualTo(End.FINISHED);
  }

  @Test
  void walksTheMasterBehindSentinel() {
    RedisLockClient locks = client(SENTINELS.get().sentinelUri(), "scan-sentinel");
    closeLater(locks.semaphore("exports", 4).tryAcquire().orElseThrow());
    assertThat(RedisLockScan.locks(locks, 10, BUDGET).locks())
        .containsExactly(new Found(LockKind.SEMAPHORE, "exports"));
  }

  @Test
  void anUnreachableServerFailsTheWalk() {
    try (RedisServer server = RedisServer.start()) {
      RedisLockClient locks = client(server.uri(), "scan-down");
      server.stop();
      assertThatThrownBy(() -> RedisLockScan.locks(locks, 10, BUDGET))
          .isInstanceOf(BackendUnavailableException.class).hasMessageContaining("scan the keys of namespace 'scan-down'");
    }
  }
}
