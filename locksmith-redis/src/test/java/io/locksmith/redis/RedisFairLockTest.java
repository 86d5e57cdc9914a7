package io.locksmith.redis;

import static io.locksmith.tck.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.DistributedLock;
import io.locksmith.Lease;
import io.locksmith.LockClient;
import io.locksmith.LockOptions;
import io.locksmith.testkit.ProcessSignals;
import io.locksmith.testkit.RedisServer;
import io.locksmith.testkit.RedisServerExtension;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The Redis fair lock's promises under load, process death and on the wire, against a real server. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisFairLockTest {
  @RegisterExtension
  static final RedisServerExtension REDIS = new RedisServerExtension();
  private static final Duration LONG_LEASE = Duration.ofSeconds(30);

  private static RedisLockClient client() {
    return RedisLockClient.create(REDIS.server().uri());
  }

  private static RedisLockClient client(Duration queueTimeout) {
    return RedisLockClient.builder().uri(REDIS.server().uri()).fairQueueTimeout(queueTimeout).build();
  }

  private static void awaitQueued(LockClient observer, String name, int count) throws InterruptedException {
    DistributedLock lock = observer.fairLock(name);
    assertThat(eventually(Duration.ofSeconds(10),
        () -> lock.inspect().map(i -> i.waiters() == count).orElse(false)))
        .as("%d waiter(s) queued on the server", count).isTrue();
  }

  /** Queues {@code count} waiters one by one, alternating clients; each releases once it is granted. */
  private static List<CompletableFuture<Void>> queueInOrder(String name, int count, List<Integer> order,
      LockClient... clients) throws InterruptedException {
    List<CompletableFuture<Void>> done = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      int index = i;
      done.add(clients[i % clients.length].fairLock(name).acquireAsync(Duration.ofSeconds(40))
          .toCompletableFuture().thenAccept(lease -> {
            order.add(index);
            lease.release();
          }));
      awaitQueued(clients[0], name, i + 1); // the next one arrives strictly after this one is queued
    }
    return done;
  }

  @Test
  void uncontendedAcquireAndReleaseCostExactlyTwoCommands() throws Exception {
    RedisServer server = REDIS.server();
    try (RedisLockClient locks = client();
        RedisMonitor monitor = new RedisMonitor(server.host(), server.port())) {
      locks.fairLock("fair-warm-up").tryAcquire().orElseThrow().release();
      server.command("ECHO", "start-marker");
      monitor.until("start-marker");
      Lease lease = locks.fairLock("fair-two-commands").tryAcquire().orElseThrow();
      assertThat(lease.release()).isTrue();
      server.command("ECHO", "end-marker");
      List<String> sent = monitor.until("end-marker").stream()
          .filter(l -> !RedisMonitor.fromScript(l))
          .collect(Collectors.toList());
      assertThat(sent).as("commands the lock client sent").hasSize(2);
      assertThat(sent.get(0)).containsIgnoringCase("evalsha").contains(RedisScript.FAIR_ACQUIRE.sha);
      assertThat(sent.get(1)).containsIgnoringCase("evalsha").contains(RedisScript.FAIR_RELEASE.sha);
    }
  }

  @Test
  void twentyWaitersAcrossTwoClientsAcquireInArrivalOrder() throws Exception {
    String name = "fair-order";
    try (RedisLockClient a = client(); RedisLockClient b = client()) {
      Lease held = a.fairLock(name, LockOptions.watched(LONG_LEASE)).acquire();
      List<Integer> order = Collections.synchronizedList(new ArrayList<>());
      List<CompletableFuture<Void>> done = queueInOrder(name, 20, order, b, a);
      held.release();
      CompletableFuture.allOf(done.toArray(new CompletableFuture<?>[0])).get(30, TimeUnit.SECONDS);
      assertThat(order).as("grant order")
          .containsExactlyElementsOf(IntStream.range(0, 20).boxed().collect(Collectors.toList()));
    }
  }

  @Test
  void aReleaseWakesOnlyTheHead() throws Exception {
    String name = "fair-no-herd";
    RedisServer server = REDIS.server();
    try (RedisLockClient a = client(); RedisLockClient b = client()) {
      Lease held = a.fairLock(name, LockOptions.watched(LONG_LEASE)).acquire();
      int waiters = 10;
      List<Integer> order = Collections.synchronizedList(new ArrayList<>());
      List<CompletableFuture<Void>> done = queueInOrder(name, waiters, order, a, b);
      long publishesBefore = CommandStats.calls(server, "publish");
      held.release();
      CompletableFuture.allOf(done.toArray(new CompletableFuture<?>[0])).get(30, TimeUnit.SECONDS);
      long publishes = CommandStats.calls(server, "publish") - publishesBefore;
      // one wake-up per hand-off: the holder's release and each waiter's release but the last
      assertThat(publishes).as("PUBLISH calls for %d hand-offs", waiters).isEqualTo(waiters);
      assertThat(order).hasSize(waiters);
    }
  }

  @Test
  void aQueuedWaiterKilledWithSigkillDoesNotStallTheNextBeyondItsPlaceTimeout() throws Exception {
    String name = "fair-killed-waiter";
    Duration queueTimeout = Duration.ofSeconds(1);
    try (RedisLockClient a = client(queueTimeout); RedisLockClient b = client(queueTimeout)) {
      Lease held = a.fairLock(name, LockOptions.watched(LONG_LEASE)).acquire();
      Process child = new ProcessBuilder(ProcessHandle.current().info().command().orElseThrow(),
          "-cp", System.getProperty("java.class.path"), QueuedFairWaiter.class.getName(),
          REDIS.server().uri(), name, Long.toString(queueTimeout.toMillis()))
          .redirectError(ProcessBuilder.Redirect.DISCARD)
          .start();
      try {
        BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(),
            StandardCharsets.UTF_8));
        String line = CompletableFuture.supplyAsync(() -> {
          try {
            return out.readLine();
          } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
          }
        }).get(30, TimeUnit.SECONDS);
        assertThat(line).as("the child's report").isEqualTo(QueuedFairWaiter.QUEUED);
        CompletableFuture<Lease> next = b.fairLock(name).acquireAsync(Duration.ofSeconds(30))
            .toCompletableFuture();
        awaitQueued(a, name, 2);

        ProcessSignals.kill9(child.pid());
        long releasedAt = System.nanoTime();
        held.release(); // wakes the head: the dead child, whose channel nobody listens on any more
        Lease lease = next.get(20, TimeUnit.SECONDS);
        long waitedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - releasedAt);
        System.out.println("next waiter granted " + waitedMillis + " ms after the release");
        assertThat(waitedMillis).as("wait behind a dead head (ms)")
            .isLessThan(queueTimeout.plusSeconds(1).toMillis());
        assertThat(lease.fencingToken()).isGreaterThan(held.fencingToken());
        lease.release();
      } finally {
        child.destroyForcibly();
        child.waitFor(10, TimeUnit.SECONDS);
      }
    }
  }

  /**
   * Regression: the head keeps its place when woken, so a wake-up that reaches a head whose waiter is
   * gone (its cancellation lost) used to bounce between client and server until the place expired.
   */
  @Test
  void aWakeUpThatFindsTheHeadGoneRemovesItAndReachesTheNextWaiter() throws Exception {
    String name = "fair-gone-head";
    RedisServer server = REDIS.server();
    try (RedisLockClient a = client(Duration.ofSeconds(20)); RedisLockClient b = client()) {
      Lease held = a.fairLock(name, LockOptions.watched(LONG_LEASE)).acquire();
      // a waiter of client a that no acquisition stands behind any more, queued first
      String lock = new RedisKeys(a.options().namespace()).fairLock(name);
      String gone = a.clientId() + ":wgone";
      String[] time = server.command("TIME").replaceAll("[^0-9]+", " ").trim().split(" ");
      long nowMillis = Long.parseLong(time[0]) * 1000 + Long.parseLong(time[1]) / 1000;
      server.command("ZADD", RedisKeys.fairQueue(lock), Long.toString(nowMillis * 1000), gone);
      server.command("ZADD", RedisKeys.fairPlaces(lock), Long.toString(nowMillis + 20_000), gone);
      CompletableFuture<Lease> next =
          b.fairLock(name).acquireAsync(Duration.ofSeconds(15)).toCompletableFuture();
      awaitQueued(a, name, 2);
      long publishesBefore = CommandStats.calls(server, "publish");
      held.release();
      Lease granted = next.get(3, TimeUnit.SECONDS); // far below the gone head's 20 s place
      long publishes = CommandStats.calls(server, "publish") - publishesBefore;
      assertThat(publishes).as("one wake-up for the gone head, one for the next").isLessThanOrEqualTo(3);
      assertThat(server.command("ZSCORE", RedisKeys.fairQueue(lock), gone)).as("gone head removed").isNull();
      granted.release();
    }
  }

  @Test
  void forceUnlockWakesTheHeadOfTheQueue() throws Exception {
    String name = "fair-force";
    try (RedisLockClient a = client(); RedisLockClient b = client()) {
      Lease held = a.fairLock(name, LockOptions.watched(LONG_LEASE)).acquire();
      CompletableFuture<Lease> waiting = b.fairLock(name).acquireAsync(Duration.ofSeconds(30))
          .toCompletableFuture();
      awaitQueued(a, name, 1);
      long start = System.nanoTime();
      assertThat(b.fairLock(name).forceUnlock()).isTrue();
      Lease next = waiting.get(10, TimeUnit.SECONDS);
      assertThat(System.nanoTime() - start).as("woken, not left to a backstop")
          .isLessThan(TimeUnit.SECONDS.toNanos(1));
      assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
      assertThat(held.release()).isFalse();
      next.release();
    }
  }

  @Test
  void keysShareOneHashTagAndOnlyTheTokenOutlivesTheQueue() throws Exception {
    String name = "fair-keys";
    RedisServer server = REDIS.server();
    try (RedisLockClient a = client(); RedisLockClient b = client()) {
      Lease held = a.fairLock(name, LockOptions.watched(LONG_LEASE)).acquire();
      CompletableFuture<Lease> waiting = b.fairLock(name).acquireAsync(Duration.ofSeconds(30))
          .toCompletableFuture();
      awaitQueued(a, name, 1);
      assertThat(server.command("KEYS", "locksmith:fair:{fair-keys}*").split("\n")).containsExactlyInAnyOrder(
          "locksmith:fair:{fair-keys}", "locksmith:fair:{fair-keys}:queue",
          "locksmith:fair:{fair-keys}:places", "locksmith:fair:{fair-keys}:fence");
      assertThat(server.command("PTTL", "locksmith:fair:{fair-keys}:queue"))
          .as("the queue expires with the last place in it").isNotEqualTo("-1");
      held.release();
      waiting.get(10, TimeUnit.SECONDS).release();
      assertThat(server.command("KEYS", "locksmith:fair:{fair-keys}*")).isEqualTo("locksmith:fair:{fair-keys}:fence");
    }
  }

  @Test
  void aBadQueueTimeoutIsRejectedAtBuild() {
    assertThatThrownBy(() -> RedisLockClient.builder().uri(REDIS.server().uri())
        .fairQueueTimeout(Duration.ofMillis(99)).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("fairQueueTimeout");
    assertThatThrownBy(() -> RedisLockClient.builder().uri(REDIS.server().uri())
        .fairQueueTimeout(null).build())
        .isInstanceOf(NullPointerException.class).hasMessageContaining("fairQueueTimeout");
  }
}
