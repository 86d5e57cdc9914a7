package io.locksmith.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.locksmith.DistributedLock;
import io.locksmith.Lease;
import io.locksmith.LockOptions;
import io.locksmith.StaleTokenException;
import io.locksmith.testkit.RedisServerExtension;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 12 item 14 against a real Redis: the holder paused between its read and its write, who wakes
 * after the next holder's read and before that holder's write. Tokens come from real grants of a real
 * lock; A's lease is a short fixed one, so B is granted only once it has run out, as after a pause.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisFencedValueTest {
  @RegisterExtension
  static final RedisServerExtension REDIS = new RedisServerExtension();

  /** The write-only compare-and-set that docs/fencing.md and the demo published before the fix. */
  private static final String WRITE_ONLY_FENCE = String.join("\n",
      "local seen = tonumber(redis.call('GET', KEYS[2]) or '0')",
      "if tonumber(ARGV[1]) < seen then",
      "  return 0",
      "end",
      "redis.call('SET', KEYS[1], ARGV[2])",
      "redis.call('SET', KEYS[2], ARGV[1])",
      "return 1");

  private static RedisClient lettuce;
  private static StatefulRedisConnection<String, String> connection;
  private static RedisCommands<String, String> redis;

  @BeforeAll
  static void connect() {
    lettuce = RedisClient.create(REDIS.server().uri());
    connection = lettuce.connect();
    redis = connection.sync();
  }

  @AfterAll
  static void disconnect() {
    connection.close();
    lettuce.shutdown(Duration.ZERO, Duration.ofSeconds(2));
  }

  /** Two real successive grants: A's with a 300 ms fixed lease, B's once that has run out. */
  private record Grants(Lease a, Lease b) {}

  private static Grants aThenB(RedisLockClient locks, String name) throws InterruptedException {
    Lease a = locks.lock(name, LockOptions.fixed(Duration.ofMillis(300))).acquire(Duration.ofSeconds(5));
    DistributedLock lockOfB = locks.lock(name);
    return new Grants(a, lockOfB.acquire(Duration.ofSeconds(10))); // waits for A's lease to run out
  }

  @Test
  void aHolderPausedBetweenTheNextHoldersReadAndWriteIsRefusedAtItsWrite() throws Exception {
    RedisFencedValue stock = RedisFencedValue.of(redis, "paused:stock");
    redis.set(stock.key(), "10");
    try (RedisLockClient locks = RedisLockClient.create(REDIS.server().uri())) {
      Lease a = locks.lock("paused", LockOptions.fixed(Duration.ofMillis(300))).acquire(Duration.ofSeconds(5));
      int readByA = Integer.parseInt(stock.read(a.fencingToken()).orElseThrow());
      // A is paused here. Its lease runs out and B is granted; B reads.
      Lease b = locks.lock("paused").acquire(Duration.ofSeconds(10));
      assertThat(b.fencingToken()).isGreaterThan(a.fencingToken());
      int readByB = Integer.parseInt(stock.read(b.fencingToken()).orElseThrow());
      // A wakes and writes what it computed; then B writes.
      assertThatThrownBy(() -> stock.write(a.fencingToken(), Integer.toString(readByA - 1)))
          .as("A's stale write after B's read")
          .isInstanceOfSatisfying(StaleTokenException.class, e -> {
            assertThat(e.token()).isEqualTo(a.fencingToken());
            assertThat(e.highestSeen()).isEqualTo(b.fencingToken());
            assertThat(e.resource()).isEqualTo("paused:stock");
          });
      stock.write(b.fencingToken(), Integer.toString(readByB - 1));
      b.release();

      assertThat(redis.get(stock.key())).as("one sale accepted, one item taken").isEqualTo("9");
      assertThat(redis.get(stock.fenceKey())).isEqualTo(Long.toString(b.fencingToken()));
    }
  }

  /**
   * The same interleaving through the script Locksmith published before: a plain GET, the token checked
   * only at the write. Both writes are accepted and two sales take one item: the lost update that the
   * test above prevents.
   */
  @Test
  void theSameInterleavingWithTheOldWriteOnlyScriptLosesAnUpdate() throws Exception {
    String key = "{old}:stock";
    String fence = "{old}:fence";
    redis.set(key, "10");
    try (RedisLockClient locks = RedisLockClient.create(REDIS.server().uri())) {
      Grants g = aThenB(locks, "old");
      // (in real time A read before B's grant; the plain GET returns the same either way)
      int readByA = Integer.parseInt(redis.get(key));
      int readByB = Integer.parseInt(redis.get(key));
      long acceptedA = redis.eval(WRITE_ONLY_FENCE, ScriptOutputType.INTEGER, new String[] {key, fence},
          Long.toString(g.a().fencingToken()), Integer.toString(readByA - 1));
      long acceptedB = redis.eval(WRITE_ONLY_FENCE, ScriptOutputType.INTEGER, new String[] {key, fence},
          Long.toString(g.b().fencingToken()), Integer.toString(readByB - 1));
      g.b().release();

      assertThat(acceptedA + acceptedB).as("both writes accepted, the stale one too").isEqualTo(2);
      assertThat(redis.get(key)).as("two sales, one item taken: an update was lost").isEqualTo("9");
    }
  }

  @Test
  void updateIsOneReadModifyWriteAndARefusedReadChangesNothing() throws Exception {
    RedisFencedValue counter = RedisFencedValue.of(redis, "{rmw}:counter");
    assertThat(counter.fenceKey()).isEqualTo("{rmw}:counter:fence");
    try (RedisLockClient locks = RedisLockClient.create(REDIS.server().uri())) {
      Grants g = aThenB(locks, "rmw");
      assertThat(counter.update(g.a().fencingToken(), v -> v.isEmpty() ? "1" : "unexpected")).isEqualTo("1");
      assertThat(counter.update(g.b().fencingToken(), v -> Integer.toString(Integer.parseInt(v.orElseThrow()) + 1)))
          .isEqualTo("2");
      boolean[] changed = {false};
      assertThatThrownBy(() -> counter.update(g.a().fencingToken(), v -> {
        changed[0] = true;
        return "stale";
      })).isInstanceOf(StaleTokenException.class);
      assertThat(changed[0]).as("a refused read runs no change").isFalse();
      assertThatThrownBy(() -> counter.read(g.a().fencingToken())).isInstanceOf(StaleTokenException.class);
      assertThat(counter.read(g.b().fencingToken())).hasValue("2"); // the same holder again
      assertThat(redis.get(counter.fenceKey())).isEqualTo(Long.toString(g.b().fencingToken()));
      g.b().release();
    }
    RedisFencedValue absent = RedisFencedValue.of(redis, "never-written");
    assertThat(absent.read(7)).isEqualTo(Optional.empty());
    assertThat(redis.get("{never-written}:fence")).isEqualTo("7");
  }

  @Test
  void badArgumentsAreRefusedClearly() {
    assertThat(RedisFencedValue.of(redis, "order:42").fenceKey()).isEqualTo("{order:42}:fence");
    assertThat(RedisFencedValue.of(redis, "a", "{a}:f").fenceKey()).isEqualTo("{a}:f");
    assertThatThrownBy(() -> RedisFencedValue.of(redis, "a{}b")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("no hash tag");
    assertThatThrownBy(() -> RedisFencedValue.of(redis, "x}")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RedisFencedValue.of(redis, "")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RedisFencedValue.of(redis, "k", "k")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RedisFencedValue.of(null, "k")).isInstanceOf(NullPointerException.class);
    RedisFencedValue value = RedisFencedValue.of(redis, "bad-args");
    assertThatThrownBy(() -> value.read(-1)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("2^53");
    assertThatThrownBy(() -> value.write((1L << 53) + 1, "v")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> value.write(1, null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> value.update(1, v -> null)).isInstanceOf(NullPointerException.class);
    assertThat(redis.exists("bad-args")).as("nothing written by refused calls").isZero();
  }

  @Test
  void aFlushedScriptCacheIsRefilled() {
    RedisFencedValue value = RedisFencedValue.of(redis, "flushed");
    value.write(3, "a");
    redis.scriptFlush();
    value.write(3, "b");
    assertThat(value.read(3)).hasValue("b");
  }
}
