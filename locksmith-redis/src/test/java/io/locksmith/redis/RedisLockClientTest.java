package io.locksmith.redis;

import static io.locksmith.tck.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.BackendUnavailableException;
import io.locksmith.ClientOptions;
import io.locksmith.FencingGuarantee;
import io.locksmith.Lease;
import io.locksmith.LeaseState;
import io.locksmith.LockException;
import io.locksmith.LockOptions;
import io.locksmith.testkit.RedisServer;
import io.locksmith.testkit.RedisServerExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Redis-specific behaviour, each case against a real server. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisLockClientTest {
  @RegisterExtension
  static final RedisServerExtension REDIS = new RedisServerExtension();

  private static RedisLockClient client() {
    return RedisLockClient.create(REDIS.server().uri());
  }


  /**
   * Regression: a wait cancelled while its attempt was in flight (the server paused) used to leave the
   * waiter registered, on the server and in the client's table of waiters to re-check after a re-subscribe.
   */
  @Test
  void aWaitCancelledWhileItsAttemptIsInFlightLeavesNoWaiterBehind() throws Exception {
    RedisServer server = REDIS.server();
    String name = "cancel-in-flight";
    try (RedisLockClient holder = client(); RedisLockClient waiter = client()) {
      Lease held = holder.lock(name).acquire();
      for (int i = 0; i < 3; i++) {
        server.command("CLIENT", "PAUSE", "300");
        CompletableFuture<Lease> wait =
            waiter.lock(name).acquireAsync(Duration.ofSeconds(30)).toCompletableFuture();
        wait.cancel(false); // while the attempt waits for the paused server
      }
      assertThat(eventually(Duration.ofSeconds(5), () -> waiter.backend.registeredWaiterCount() == 0
          && "0".equals(server.command("ZCARD", RedisKeys.waiters(new RedisKeys("locksmith").lock(name))))))
          .as("no waiter left registered").isTrue();
      held.release();
    }
  }

  @Test
  void uncontendedAcquireAndReleaseCostExactlyTwoCommands() throws Exception {
    RedisServer server = REDIS.server();
    try (RedisLockClient locks = client();
        RedisMonitor monitor = new RedisMonitor(server.host(), server.port())) {
      locks.lock("warm-up").tryAcquire().orElseThrow().release(); // connection handshakes are behind us
      server.command("ECHO", "start-marker");
      monitor.until("start-marker");
      Map<String, Long> before = CommandStats.calls(server);

      Lease lease = locks.lock("two-commands").tryAcquire().orElseThrow();
      assertThat(lease.release()).isTrue();

      Map<String, Long> after = CommandStats.calls(server);
      server.command("ECHO", "end-marker");
      List<String> sent = monitor.until("end-marker").stream()
          .filter(l -> !RedisMonitor.fromScript(l))
          .filter(l -> !l.contains("\"INFO\"") && !l.contains("\"info\""))
          .collect(Collectors.toList());
      assertThat(sent).as("commands the lock client sent").hasSize(2);
      assertThat(sent.get(0)).containsIgnoringCase("evalsha").contains(RedisScript.acquire(RedisLockClient.DEFAULT_WAITER_RECHECK.toMillis(),
          RedisLockClient.DEFAULT_FENCE_RETENTION.toMillis(), true).sha);
      assertThat(sent.get(1)).containsIgnoringCase("evalsha").contains(RedisScript.RELEASE.sha);
      assertThat(after.get("evalsha") - before.getOrDefault("evalsha", 0L))
          .as("EVALSHA calls in INFO commandstats").isEqualTo(2);
    }
  }

  @Test
  void aWaiterInAnotherClientIsNotifiedNotLeftToItsRecheck() throws Exception {
    try (RedisLockClient holder = client(); RedisLockClient waiter = client()) {
      List<Long> handoffMicros = new ArrayList<>();
      for (int round = 0; round < 7; round++) {
        String name = "notify-" + round;
        Lease held = holder.lock(name, LockOptions.watched(Duration.ofSeconds(30))).acquire();
        long[] acquiredAt = new long[1];
        CompletableFuture<Lease> waiting = CompletableFuture.supplyAsync(() -> {
          try {
            Lease l = waiter.lock(name).acquire(Duration.ofSeconds(20));
            acquiredAt[0] = System.nanoTime();
            return l;
          } catch (InterruptedException e) {
            throw new IllegalStateException(e);
          }
        });
        // the waiter has registered on the server (refused once, now waiting for the wake-up)
        assertThat(eventually(Duration.ofSeconds(5),
            () -> holder.inspect(name).map(i -> i.waiters() == 1).orElse(false))).isTrue();
        long releasedAt = System.nanoTime();
        held.release();
        Lease next = waiting.get(10, TimeUnit.SECONDS);
        handoffMicros.add(TimeUnit.NANOSECONDS.toMicros(acquiredAt[0] - releasedAt));
        next.release();
      }
      handoffMicros.sort(null);
      System.out.println("release -> waiter acquired (µs, sorted): " + handoffMicros);
      // Functional, not a benchmark (hand-off speed is measured in the bench module): a missed wake-up leaves
      // the waiter to its recheck, 5 s away, which both bounds catch. The median bound is loose (250 ms) so a
      // loaded 2-core CI host that deschedules a thread for a few rounds does not fail it.
      assertThat(handoffMicros.get(handoffMicros.size() / 2)).as("median hand-off").isLessThan(250_000);
      assertThat(handoffMicros).allSatisfy(us -> assertThat(us).isLessThan(1_000_000));
    }
  }

  @Test
  void renewalStopsTheMomentALeaseIsReleased() throws Exception {
    RedisServer server = REDIS.server();
    // renewed every 500 ms: a shorter lease (it was 150 ms) lapses when a loaded host stalls the renewal
    // thread or the MONITOR reader for ~100 ms, and then release() fails for a reason this test is not about
    Duration lease = Duration.ofMillis(1500);
    Duration renewalPeriod = lease.dividedBy(3);
    try (RedisLockClient locks = client();
        RedisMonitor monitor = new RedisMonitor(server.host(), server.port())) {
      Lease held = locks.lock("renewal-stops", LockOptions.watched(lease)).acquire();
      int renewals = 0;
      while (renewals < 3) { // renewals do reach the server while held
        String line = monitor.next(5_000);
        assertThat(line).as("a renewal within 5 s").isNotNull();
        if (line.contains(RedisScript.RENEW_LOCK.sha) && line.contains("{renewal-stops}")) {
          renewals++;
        }
      }
      assertThat(held.release()).isTrue();
      List<String> afterRelease = new ArrayList<>();
      boolean releaseSeen = false;
      long until = System.nanoTime() + renewalPeriod.multipliedBy(5).toNanos(); // five renewal periods
      while (System.nanoTime() < until) {
        String line = monitor.next(20);
        if (line == null) {
          continue;
        }
        if (line.contains(RedisScript.RELEASE.sha)) {
          releaseSeen = true;
        } else if (releaseSeen && line.contains(RedisScript.RENEW_LOCK.sha) && line.contains("{renewal-stops}")) {
          afterRelease.add(line);
        }
      }
      assertThat(releaseSeen).isTrue();
      assertThat(afterRelease).as("renewals after the release").isEmpty();
    }
  }

  @Test
  void aLostScriptCacheIsReloadedTransparently() throws Exception {
    try (RedisLockClient locks = client()) {
      REDIS.server().command("SCRIPT", "FLUSH");
      Lease lease = locks.lock("script-flush").acquire(Duration.ofSeconds(2));
      assertThat(lease.isHeld()).isTrue();
      assertThat(lease.release()).isTrue();
    }
  }

  @Test
  void tokensKeepIncreasingWhenTheServerLosesItsData() throws Exception {
    try (RedisLockClient locks = client()) {
      assertThat(locks.capabilities().fencing()).isEqualTo(FencingGuarantee.CLOCK_FLOORED);
      Lease first = locks.lock("token-floor").acquire();
      first.release();
      REDIS.server().command("FLUSHALL"); // what a restart without persistence does to the counter
      Lease second = locks.lock("token-floor").acquire();
      assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
      second.release();
    }
  }

  @Test
  void inspectionShowsHolderHoldsTtlTokenAndWaiters() throws Exception {
    try (RedisLockClient a = client(); RedisLockClient b = client()) {
      var lock = a.lock("inspected", LockOptions.fixed(Duration.ofSeconds(20)));
      lock.lock();
      lock.lock();
      CompletableFuture<Lease> waiting = b.lock("inspected").acquireAsync(Duration.ofSeconds(10)).toCompletableFuture();
      assertThat(eventually(Duration.ofSeconds(5),
          () -> b.inspect("inspected").map(i -> i.waiters() == 1).orElse(false))).isTrue();
      var info = b.inspect("inspected").orElseThrow();
      assertThat(info.owner()).startsWith(a.clientId() + ":");
      assertThat(info.holdCount()).isEqualTo(2);
      assertThat(info.fencingToken()).isEqualTo(lock.currentThreadLease().orElseThrow().fencingToken());
      assertThat(info.remainingTtl()).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(20));
      assertThat(b.forceUnlock("inspected")).isTrue(); // operator clears it: the waiter is woken
      waiting.get(5, TimeUnit.SECONDS).release();
    }
  }

  @Test
  void namesWithBracesAndUnicodeStayDistinct() throws Exception {
    try (RedisLockClient locks = client()) {
      Lease a = locks.lock("{a}").tryAcquire().orElseThrow();
      Lease b = locks.lock("a").tryAcquire().orElseThrow();
      Lease c = locks.lock("}ü{ ✓").tryAcquire().orElseThrow();
      assertThat(locks.lock("{a}").tryAcquire()).isEmpty();
      assertThat(List.of(a, b, c)).allSatisfy(l -> assertThat(l.release()).isTrue());
    }
  }

  @Test
  void aclUserAndPasswordFromTheUri() throws Exception {
    RedisServer server = REDIS.server();
    server.command("ACL", "SETUSER", "locker", "on", ">s3cret", "~*", "&*", "+@all");
    String uri = "redis://locker:s3cret@" + server.host() + ":" + server.port();
    try (RedisLockClient locks = RedisLockClient.create(uri)) {
      assertThat(locks.serverDescription()).doesNotContain("s3cret");
      assertThat(locks.lock("acl").tryAcquire().orElseThrow().release()).isTrue();
    }
    String wrong = "redis://locker:wrong@" + server.host() + ":" + server.port();
    assertThatThrownBy(() -> RedisLockClient.create(wrong)).isInstanceOf(LockException.class)
        .hasMessageContaining("WRONGPASS");
  }

  @Test
  void badSettingsAreRejectedAtBuild() {
    assertThatThrownBy(() -> RedisLockClient.create("http://localhost")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("redis://");
    assertThatThrownBy(() -> RedisLockClient.builder().uri("redis://localhost").commandTimeout(Duration.ZERO).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("commandTimeout");
    assertThatThrownBy(() -> RedisLockClient.builder().build()).isInstanceOf(NullPointerException.class);
  }

  @Test
  void anUnreachableServerFailsClosedAndHeldLeasesGoUncertainThenLost() throws Exception {
    Duration timeout = Duration.ofMillis(500);
    try (RedisServer server = RedisServer.start()) {
      RedisLockClient locks = RedisLockClient.builder().uri(server.uri()).commandTimeout(timeout)
          .options(ClientOptions.builder().namespace("unreachable").build()).build();
      Lease held = locks.lock("held", LockOptions.watched(Duration.ofMillis(1500))).acquire();
      List<LeaseState> transitions = new ArrayList<>();
      held.addListener((l, from, to) -> {
        synchronized (transitions) {
          transitions.add(to);
        }
      });
      server.kill();

      long start = System.nanoTime();
      // a wait keeps trying across the outage and fails, as unavailable, only when it runs out
      assertThatThrownBy(() -> locks.lock("other").acquire(Duration.ofSeconds(1)))
          .isInstanceOf(BackendUnavailableException.class).hasMessageContaining("'other' was not acquired within 1 s")
          .hasCauseInstanceOf(BackendUnavailableException.class);
      long failedAfter = System.nanoTime() - start;
      assertThat(failedAfter).as("failed after the wait, within one more command timeout + 1 s")
          .isBetween(Duration.ofSeconds(1).toNanos(), timeout.plusSeconds(2).toNanos());
      assertThatThrownBy(() -> locks.lock("other").tryAcquire()).isInstanceOf(BackendUnavailableException.class);

      assertThat(eventually(Duration.ofSeconds(5), () -> held.state() == LeaseState.LOST)).isTrue();
      assertThat(eventually(Duration.ofSeconds(2), () -> {
        synchronized (transitions) {
          return transitions.equals(List.of(LeaseState.UNCERTAIN, LeaseState.LOST));
        }
      })).as("transitions seen: %s", transitions).isTrue();
      assertThat(held.remainingValidity()).isZero();

      locks.close();
      assertThat(eventually(Duration.ofSeconds(5), () -> liveThreads().isEmpty()))
          .as("threads left after close: %s", liveThreads()).isTrue();
    }
  }

  @Test
  void connectingToANonListeningPortFailsWithinTheTimeout() {
    int deadPort;
    try (RedisServer server = RedisServer.start()) {
      deadPort = server.port();
    }
    long start = System.nanoTime();
    assertThatThrownBy(() -> RedisLockClient.builder().uri("redis://127.0.0.1:" + deadPort)
        .commandTimeout(Duration.ofMillis(500)).build())
        .isInstanceOf(BackendUnavailableException.class).hasMessageContaining(String.valueOf(deadPort));
    assertThat(System.nanoTime() - start).isLessThan(Duration.ofMillis(1500).toNanos());
  }

  /** Threads of Locksmith, or of the Lettuce client it started, still alive. */
  private static List<String> liveThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(Thread::isAlive)
        .map(Thread::getName)
        .filter(n -> n.startsWith("locksmith-timer-") || n.startsWith("locksmith-events-") || n.startsWith("lettuce-"))
        .collect(Collectors.toList());
  }

}
