package io.locksmith.redis;

import static io.locksmith.tck.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisURI;
import io.locksmith.ClientOptions;
import io.locksmith.DistributedSemaphore;
import io.locksmith.Lease;
import io.locksmith.LeaseState;
import io.locksmith.LockInfo;
import io.locksmith.LockKind;
import io.locksmith.LockOptions;
import io.locksmith.internal.DefaultLockClient;
import io.locksmith.spi.AcquireMode;
import io.locksmith.spi.AcquireReply;
import io.locksmith.spi.SemaphoreOps;
import io.locksmith.testkit.ProcessSignals;
import io.locksmith.testkit.RedisServer;
import io.locksmith.testkit.RedisServerExtension;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Redis-specific semaphore behaviour, each case against a real server. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisSemaphoreTest {
  @RegisterExtension
  static final RedisServerExtension REDIS = new RedisServerExtension();
  private static final LockOptions LONG = LockOptions.watched(Duration.ofSeconds(30));

  private static RedisLockClient client() {
    return RedisLockClient.create(REDIS.server().uri());
  }

  /** A client over a backend the test can reach, for the SPI operations the public API does not expose. */
  private static final class Direct implements AutoCloseable {
    final RedisBackend backend = new RedisBackend(RedisURI.create(REDIS.server().uri()), Duration.ofSeconds(2),
        RedisLockClient.DEFAULT_WAITER_RECHECK, Duration.ofHours(1));
    final DefaultLockClient client = new DefaultLockClient(backend, ClientOptions.defaults());

    SemaphoreOps ops(int declared) {
      return backend.semaphoreOps(declared);
    }

    @Override
    public void close() {
      client.close();
    }
  }

  @Test
  void theBackendOffersSemaphores() {
    try (RedisLockClient locks = client()) {
      assertThat(locks.capabilities().supports(LockKind.SEMAPHORE)).isTrue();
    }
  }

  @Test
  void aKilledHolderProcessesPermitComesBackWithinItsLease() throws Exception {
    RedisServer server = REDIS.server();
    long leaseMillis = 1500;
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    Process child = new ProcessBuilder(java.toString(), "-cp", System.getProperty("java.class.path"),
        SemaphoreHolderProcess.class.getName(), server.uri(), "crash", "1", Long.toString(leaseMillis))
        .redirectError(ProcessBuilder.Redirect.DISCARD).start();
    try (RedisLockClient locks = client()) {
      BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
      String line = out.readLine();
      assertThat(line).as("the child took the permit").startsWith("HELD ");
      long childToken = Long.parseLong(line.substring(5));
      DistributedSemaphore semaphore = locks.semaphore("crash", 1);
      assertThat(semaphore.tryAcquire()).as("the child's permit is taken").isEmpty();
      CompletableFuture<Lease> waiting = semaphore.acquireAsync(Duration.ofSeconds(20)).toCompletableFuture();
      long killedAt = System.nanoTime();
      ProcessSignals.kill9(child.pid()); // no release, no close: only the lease can free the permit
      Lease mine = waiting.get(15, TimeUnit.SECONDS);
      long afterKill = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
      // the last renewal happened at most one renewal interval before the kill, so the permit expires
      // within one lease of it; the waiter's backstop is set to that expiry
      assertThat(afterKill).as("ms from kill -9 to the permit coming back").isLessThan(leaseMillis + 1000);
      assertThat(mine.fencingToken()).isGreaterThan(childToken);
      assertThat(semaphore.describe().taken()).isEqualTo(1);
      mine.release();
    } finally {
      child.destroyForcibly();
      child.waitFor(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void aReleaseSendsOnePublishHoweverManyWait() throws Exception {
    RedisServer server = REDIS.server();
    try (RedisLockClient a = client(); RedisLockClient b = client()) {
      Lease held = a.semaphore("herd", 1, LONG).acquire();
      DistributedSemaphore inB = b.semaphore("herd", 1, LONG);
      List<CompletableFuture<Lease>> waiting = new ArrayList<>();
      for (int i = 0; i < 6; i++) {
        waiting.add(inB.acquireAsync(Duration.ofSeconds(30)).toCompletableFuture());
      }
      assertThat(eventually(Duration.ofSeconds(5), () -> inB.describe().waiters() == 6)).isTrue();
      long before = CommandStats.calls(server, "publish");
      held.release();
      assertThat(eventually(Duration.ofSeconds(3),
          () -> waiting.stream().filter(CompletableFuture::isDone).count() == 1)).isTrue();
      assertThat(CommandStats.calls(server, "publish") - before).as("PUBLISH per release").isEqualTo(1);
      assertThat(inB.describe().waiters()).isEqualTo(5);

      // an operator adds 3 permits: exactly 3 of the 5 waiters are woken
      before = CommandStats.calls(server, "publish");
      inB.setPermits(4);
      assertThat(eventually(Duration.ofSeconds(3),
          () -> waiting.stream().filter(CompletableFuture::isDone).count() == 4)).isTrue();
      assertThat(CommandStats.calls(server, "publish") - before).as("PUBLISH for 3 new permits").isEqualTo(3);
      for (CompletableFuture<Lease> w : waiting) {
        w.cancel(false);
        if (!w.isCancelled()) {
          w.join().release();
        }
      }
    }
  }

  @Test
  void aWakeUpForAWaiterThatIsGoneIsPassedOn() throws Exception {
    RedisServer server = REDIS.server();
    try (RedisLockClient a = client(); RedisLockClient b = client()) {
      Lease held = a.semaphore("pass-on", 1, LONG).acquire();
      // a waiter of b's that b does not know (it gave up without its cancelWait arriving), first in line
      String[] time = server.command("TIME").split("\n");
      long nowMs = Long.parseLong(time[0]) * 1000 + Long.parseLong(time[1]) / 1000;
      String waiters = ClientOptions.DEFAULT_NAMESPACE + ":sem:{pass-on}:waiters";
      server.command("ZADD", waiters, Long.toString(nowMs + 6000), b.clientId() + ":wgone");
      DistributedSemaphore inB = b.semaphore("pass-on", 1);
      CompletableFuture<Lease> waiting = inB.acquireAsync(Duration.ofSeconds(20)).toCompletableFuture();
      assertThat(eventually(Duration.ofSeconds(5), () -> inB.describe().waiters() == 2)).isTrue();
      held.release();
      // the wake-up goes to the gone waiter; b passes it on at once, well before the real waiter's
      // 5 s backstop
      waiting.get(3, TimeUnit.SECONDS).release();
      assertThat(inB.describe().waiters()).isZero();
    }
  }

  @Test
  void keysShareOneHashTagAndOnlyTheCountOutlivesThePermits() throws Exception {
    RedisServer server = REDIS.server();
    try (RedisLockClient locks = client()) {
      DistributedSemaphore semaphore = locks.semaphore("layout", 2, LockOptions.fixed(Duration.ofSeconds(20)));
      Lease lease = semaphore.acquire();
      String prefix = ClientOptions.DEFAULT_NAMESPACE + ":sem:{layout}";
      assertThat(Set.of(server.command("KEYS", prefix + "*").split("\n")))
          .containsExactlyInAnyOrder(prefix, prefix + ":holders", prefix + ":tokens", prefix + ":fence");
      assertThat(server.command("GET", prefix)).isEqualTo("2");
      assertThat(server.command("PTTL", prefix)).as("the count is configuration").isEqualTo("-1");
      long holdersTtl = Long.parseLong(server.command("PTTL", prefix + ":holders"));
      assertThat(holdersTtl).isPositive().isLessThanOrEqualTo(20_000);
      assertThat(Long.parseLong(server.command("PTTL", prefix + ":tokens"))).isPositive();
      assertThat(server.command("HGET", prefix + ":tokens", server.command("ZRANGE", prefix + ":holders", "0", "0")))
          .isEqualTo(Long.toString(lease.fencingToken()));
      lease.release();
      assertThat(Set.of(server.command("KEYS", prefix + "*").split("\n")))
          .as("the permit count and the last token stay").containsExactlyInAnyOrder(prefix, prefix + ":fence");

      RedisKeys keys = new RedisKeys("ns");
      for (String name : List.of("a", "{a}", "}ü{ ✓")) {
        String lockTag = tag(keys.lock(name));
        assertThat(tag(keys.semaphore(name))).as("same slot as the lock of that name").isEqualTo(lockTag);
        assertThat(keys.semaphore(name)).startsWith("ns:sem:").isNotEqualTo(keys.lock(name));
      }
      assertThat(keys.semaphore("{a}")).isNotEqualTo(keys.semaphore("a"));
    }
  }

  private static String tag(String key) {
    return key.substring(key.indexOf('{'), key.indexOf('}') + 1);
  }

  @Test
  void inspectShowsTheLastExpiringHolderAndForceUnlockFreesEveryPermit() throws Exception {
    try (Direct direct = new Direct(); RedisLockClient b = client()) {
      // 3 s, not 400 ms: a permit that lapsed under a stalled renewal thread let the waiter in before the
      // force-unlock, which then dropped the waiter's permit too. The 20 s fixed permit still ends last.
      DistributedSemaphore semaphore =
          direct.client.semaphore("operator", 2, LockOptions.watched(Duration.ofSeconds(3)));
      Lease first = semaphore.acquire();
      Lease last = direct.client.semaphore("operator", 2, LockOptions.fixed(Duration.ofSeconds(20))).acquire();
      CompletableFuture<Lease> waiting = b.semaphore("operator", 2).acquireAsync(Duration.ofSeconds(20))
          .toCompletableFuture();
      SemaphoreOps ops = direct.ops(2);
      assertThat(eventually(Duration.ofSeconds(5),
          () -> ops.inspect("operator").toCompletableFuture().join().map(i -> i.waiters() == 1).orElse(false)))
          .isTrue();
      LockInfo info = ops.inspect("operator").toCompletableFuture().join().orElseThrow();
      assertThat(info.owner()).as("the holder whose lease ends last").startsWith(direct.client.clientId() + ":");
      assertThat(info.fencingToken()).isEqualTo(last.fencingToken());
      assertThat(info.holdCount()).isEqualTo(1);
      assertThat(info.remainingTtl()).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(20));

      CountDownLatch lost = new CountDownLatch(1);
      first.onLost(lost::countDown);
      assertThat(ops.forceUnlock("operator").toCompletableFuture().join()).isTrue();
      Lease next = waiting.get(3, TimeUnit.SECONDS);
      assertThat(lost.await(5, TimeUnit.SECONDS))
          .as("the watched holder learns from the force-unlock's notice, at the latest at its next renewal (1 s)")
          .isTrue();
      assertThat(first.state()).isEqualTo(LeaseState.LOST);
      assertThat(semaphore.describe().permits()).as("the count stays").isEqualTo(2);
      assertThat(semaphore.describe().taken()).isEqualTo(1);
      next.release();
      assertThat(ops.inspect("operator").toCompletableFuture().join()).isEmpty();
      assertThat(ops.forceUnlock("operator").toCompletableFuture().join()).isFalse();
    }
  }

  @Test
  void aReentryIsNeverGrantedAndAStaleRetryGetsTheSamePermit() throws Exception {
    try (Direct direct = new Direct()) {
      SemaphoreOps ops = direct.ops(1);
      AcquireReply reentry = ops.acquire("modes", "x:1", 5000, AcquireMode.REENTER, null)
          .toCompletableFuture().join();
      assertThat(reentry.lost()).isTrue();
      AcquireReply grant = ops.acquire("modes", "x:1", 5000, AcquireMode.NEW, null).toCompletableFuture().join();
      assertThat(grant.granted()).isTrue();
      assertThat(ops.acquire("modes", "x:1", 5000, AcquireMode.REENTER, null).toCompletableFuture().join().lost())
          .as("even for a holder: permits have no re-entry").isTrue();
      // the same owner again (an earlier attempt's reply was lost): its permit, its token, no second permit
      AcquireReply again = ops.acquire("modes", "x:1", 5000, AcquireMode.NEW, null).toCompletableFuture().join();
      assertThat(again.granted()).isTrue();
      assertThat(again.fencingToken()).isEqualTo(grant.fencingToken());
      AcquireReply other = ops.acquire("modes", "x:2", 5000, AcquireMode.NEW, null).toCompletableFuture().join();
      assertThat(other.granted()).isFalse();
      assertThat(other.retryAfterMillis()).as("until the holder's lease ends, capped by the recheck")
          .isPositive().isLessThanOrEqualTo(5000);
      assertThat(ops.release("modes", "x:1", false).toCompletableFuture().join()).isZero();
      assertThat(ops.release("modes", "x:1", true).toCompletableFuture().join()).isEqualTo(-1);
    }
  }

  @Test
  void aLostScriptCacheIsReloadedTransparently() throws Exception {
    try (RedisLockClient locks = client()) {
      REDIS.server().command("SCRIPT", "FLUSH");
      Lease lease = locks.semaphore("script-flush", 2).acquire(Duration.ofSeconds(2));
      assertThat(lease.release()).isTrue();
    }
  }

  @Test
  void tokensKeepIncreasingWhenTheServerLosesItsData() throws Exception {
    try (RedisLockClient locks = client()) {
      Lease first = locks.semaphore("token-floor", 1).acquire();
      first.release();
      REDIS.server().command("FLUSHALL"); // what a restart without persistence does to the counter
      Lease second = locks.semaphore("token-floor", 1).acquire();
      assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
      second.release();
    }
  }
}
