package io.locksmith.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.DistributedLock;
import io.locksmith.Lease;
import io.locksmith.testkit.RedisServer;
import io.locksmith.testkit.RedisServerExtension;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Input at the edges, against a real server: names, interrupted callers, durations. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisInputBoundsTest {
  @RegisterExtension
  static final RedisServerExtension REDIS = new RedisServerExtension();

  private static RedisLockClient client() {
    return RedisLockClient.create(REDIS.server().uri());
  }

  private static long scriptCalls(RedisServer server) {
    Map<String, Long> calls = CommandStats.calls(server);
    return calls.getOrDefault("evalsha", 0L) + calls.getOrDefault("eval", 0L);
  }

  /**
   * Regression (issue 12 item 11): "job-" + U+D800, "job-" + U+DBFF and "job-?" were one Redis key,
   * because an unpaired surrogate has no UTF-8 form and was encoded as '?'.
   */
  @Test
  void namesWithUnpairedSurrogatesNeverReachRedis() throws Exception {
    try (RedisLockClient a = client(); RedisLockClient b = client()) {
      assertThatThrownBy(() -> a.lock("job-\uD800")).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("unpaired UTF-16 surrogate");
      assertThatThrownBy(() -> b.lock("job-\uDBFF")).isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> b.forceUnlock("job-\uDBFF")).isInstanceOf(IllegalArgumentException.class);
      try (Lease question = a.lock("job-?").tryAcquire().orElseThrow();
          Lease grinning = b.lock("job-\uD83D\uDE00").tryAcquire().orElseThrow()) {
        assertThat(REDIS.server().command("EXISTS", new RedisKeys("locksmith").lock("job-?"))).isEqualTo("1");
        assertThat(grinning.fencingToken()).isNotEqualTo(question.fencingToken());
      }
    }
  }

  /**
   * Regression (issue 12 item 12): an interrupted thread's lease-view acquisition sent its attempt
   * before noticing the interrupt; Redis ran it, and a grant then had to be given back.
   */
  @Test
  void aPreInterruptedAcquisitionSendsNoCommand() throws Exception {
    RedisServer server = REDIS.server();
    try (RedisLockClient locks = client()) {
      DistributedLock lock = locks.lock("interrupted");
      lock.tryAcquire().orElseThrow().release(); // scripts loaded, connections up
      List<Callable<?>> calls = List.of(lock::acquire, () -> lock.acquire(Duration.ofSeconds(5)),
          () -> lock.tryAcquire(Duration.ofSeconds(5)), () -> lock.tryAcquire(Duration.ZERO),
          () -> lock.acquire(Duration.ZERO));
      long before = scriptCalls(server);
      CompletableFuture<List<String>> outcome = CompletableFuture.supplyAsync(() -> {
        List<String> wrong = new ArrayList<>();
        for (Callable<?> call : calls) {
          Thread.currentThread().interrupt();
          try {
            wrong.add("returned " + call.call());
          } catch (InterruptedException expected) {
            // the documented outcome
          } catch (Exception e) {
            wrong.add("threw " + e);
          } finally {
            Thread.interrupted();
          }
        }
        return wrong;
      }, command -> new Thread(command, "interrupted-caller").start());
      assertThat(outcome.get(20, TimeUnit.SECONDS)).isEmpty();
      // one attempt on the same connection: every command sent before it has been executed by now
      Lease marker = locks.lock("after-the-interrupted-calls").tryAcquire().orElseThrow();
      assertThat(scriptCalls(server) - before).as("scripts Redis ran: only the marker's attempt").isEqualTo(1);
      marker.release();
      assertThat(lock.inspect()).isEmpty();
    }
  }

  /**
   * Regression (issue 12 item 13): durations past what milliseconds or nanoseconds in a long can hold
   * failed with an ArithmeticException from deep inside (or, for the fence retention, overflowed
   * {@code SET … PX} so that the fence key expired at once) instead of a clear error at build().
   */
  @Test
  void absurdDurationsAreRejectedAtBuild() {
    Duration forever = ChronoUnit.FOREVER.getDuration();
    Duration maxMillis = Duration.ofMillis(Long.MAX_VALUE);
    List<UnaryOperator<RedisLockClient.Builder>> settings = List.of(
        b -> b.commandTimeout(forever), b -> b.commandTimeout(maxMillis),
        b -> b.commandTimeout(RedisLockClient.MAX_COMMAND_TIMEOUT.plusMillis(1)),
        b -> b.waiterRecheck(forever), b -> b.waiterRecheck(RedisLockClient.MAX_WAITER_RECHECK.plusMillis(1)),
        b -> b.fenceRetention(forever), b -> b.fenceRetention(maxMillis),
        b -> b.fenceRetention(RedisLockClient.MAX_FENCE_RETENTION.plusMillis(1)),
        b -> b.fairQueueTimeout(forever));
    for (UnaryOperator<RedisLockClient.Builder> setting : settings) {
      assertThatThrownBy(() -> setting.apply(RedisLockClient.builder().uri(REDIS.server().uri())).build())
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at most");
    }
    List<UnaryOperator<RedlockClient.Builder>> redlock = List.of(
        b -> b.nodeTimeout(forever), b -> b.retryDelay(maxMillis), b -> b.waiterRecheck(forever),
        b -> b.fenceRetention(maxMillis));
    for (UnaryOperator<RedlockClient.Builder> setting : redlock) {
      // rejected before any node is contacted (nothing listens on these ports)
      assertThatThrownBy(() -> setting.apply(RedlockClient.builder()
              .nodes("redis://127.0.0.1:1", "redis://127.0.0.1:2", "redis://127.0.0.1:3")).build())
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at most");
    }
  }

  /** The longest fence retention accepted is kept by Redis as given (SET … PX does not overflow). */
  @Test
  void theLongestFenceRetentionIsKept() throws Exception {
    RedisServer server = REDIS.server();
    try (RedisLockClient locks = RedisLockClient.builder().uri(server.uri())
        .fenceRetention(RedisLockClient.MAX_FENCE_RETENTION).build()) {
      locks.lock("long-retention").tryAcquire().orElseThrow().release();
      long pttl = Long.parseLong(server.command("PTTL",
          RedisKeys.fence(new RedisKeys("locksmith").lock("long-retention"))));
      assertThat(pttl).isGreaterThan(RedisLockClient.MAX_FENCE_RETENTION.minusMinutes(1).toMillis());
    }
  }
}
