package io.locksmith.internal;

import static io.locksmith.tck.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.ClientOptions;
import io.locksmith.Lease;
import io.locksmith.LockOptions;
import io.locksmith.redis.RedisTestBackends;
import io.locksmith.testkit.RedisServer;
import io.locksmith.testkit.RedisServerExtension;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 23 item 25: the two places where the local hand-off (Redis exclusive lock) lost a wake-up. Here, in
 * the core's package, because the core client's test hooks are package-private; the backend is a real Redis.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LocalWaitGapsTest {
  @RegisterExtension
  static final RedisServerExtension REDIS = new RedisServerExtension();

  private static DefaultLockClient client() {
    return new DefaultLockClient(RedisTestBackends.backend(REDIS.server().uri()), ClientOptions.defaults());
  }

  /**
   * A new acquisition is queued behind its client's lease before it waits. A release in between can neither
   * hand the lock to it (it is not waiting yet) nor tell it to ask; before the fix it then slept until its
   * local backstop (1 s). The hook releases the lease in exactly that gap, and the backstop is made 10 min
   * here, so only the release's request to ask can end the wait: before the fix, the 10 s below ran out.
   */
  @Test
  void aReleaseBeforeTheNewcomerWaitsHasItAskAtOnce() throws Exception {
    String name = "gap-before-waiting";
    try (DefaultLockClient locks = client()) {
      locks.localBackstopNanos = TimeUnit.MINUTES.toNanos(10);
      Lease held = locks.lock(name).acquire();
      CompletableFuture<Boolean> releasedInGap = new CompletableFuture<>();
      locks.beforeLocalStart = acquisition -> {
        locks.beforeLocalStart = null;
        // release() returns once the release is answered and the client's local waiters were told
        releasedInGap.complete(held.release());
      };
      CompletableFuture<Lease> next = locks.lock(name).acquireAsync(Duration.ofSeconds(30)).toCompletableFuture();
      assertThat(releasedInGap.get(10, TimeUnit.SECONDS)).as("released while the newcomer was queued, not waiting")
          .isTrue();
      Lease lease = next.get(10, TimeUnit.SECONDS);
      assertThat(lease.fencingToken()).isGreaterThan(held.fencingToken());
      assertThat(lease.release()).isTrue();
    }
  }

  /**
   * A waiter registered on the server, claimed for a hand-off that the cohort limit turns into a plain
   * release, waits for a wake-up again. Its re-check must stay where it was: the server drops the
   * registration 2 s after that re-check was due, so re-arming a full re-check time from the claim (before
   * the fix) could outlive the registration, and a release after that woke nobody. The cohort's 8 hand-offs
   * in a row are stood for by the run counter on the lock hash ({@code h}); RedisLocalHandOffTest builds
   * them one by one.
   */
  @Test
  void aCohortClaimDoesNotPushTheWaitersRecheckPastItsRegistration() throws Exception {
    String name = "gap-cohort-recheck";
    RedisServer server = REDIS.server();
    String lockKey = "locksmith:lock:{" + name + "}";
    String waitersKey = lockKey + ":waiters";
    try (DefaultLockClient third = client(); DefaultLockClient busy = client(); DefaultLockClient other = client()) {
      Lease first = third.lock(name, LockOptions.fixed(Duration.ofSeconds(30))).acquire();
      CompletableFuture<Lease> w0 = acquireAsync(busy, name);
      assertThat(eventually(Duration.ofSeconds(10), () -> busy.localWaiters(name).size() == 1
          && server.command("ZCARD", waitersKey).equals("1")))
          .as("precondition: the first waiter of the busy client is registered").isTrue();
      awaitNextServerMillisecond(server); // registrations in distinct ms: the first is woken first
      CompletableFuture<Lease> w1 = acquireAsync(busy, name);
      assertThat(eventually(Duration.ofSeconds(10), () -> busy.localWaiters(name).size() == 2
          && server.command("ZCARD", waitersKey).equals("2")))
          .as("precondition: the second is registered").isTrue();
      Acquisition second = busy.localWaiters(name).get(1);
      CompletableFuture<Lease> outsider = acquireAsync(other, name);
      assertThat(eventually(Duration.ofSeconds(10),
          () -> server.command("ZCARD", waitersKey).equals("3")))
          .as("precondition: the other client's waiter is registered").isTrue();

      assertThat(first.release()).isTrue(); // wakes the busy client's first waiter
      Lease held = w0.get(10, TimeUnit.SECONDS);
      assertThat(eventually(Duration.ofSeconds(10), () -> second.recheckDueNanos() != 0 && !w1.isDone()))
          .as("precondition: the second waits").isTrue();
      long dueBefore = second.recheckDueNanos();
      // as after 8 hand-offs in a row: the run field of the lock value (token|holds|run|flags|owner)
      String[] value = server.command("GET", lockKey).split("\\|", 5);
      server.command("SET", lockKey, String.join("|", value[0], value[1], "8", value[3], value[4]), "KEEPTTL");
      assertThat(held.release()).isTrue(); // claims the second; the script releases plainly for the outsider

      assertThat(w1.isDone()).as("the claimed waiter was not handed the lock").isFalse();
      assertThat(second.recheckDueNanos()).as("its re-check is no later than before the claim (ns)")
          .isLessThanOrEqualTo(dueBefore);
      Lease theirs = outsider.get(10, TimeUnit.SECONDS);
      assertThat(theirs.release()).isTrue(); // wakes the second, still registered
      Lease mine = w1.get(10, TimeUnit.SECONDS);
      assertThat(mine.fencingToken()).isGreaterThan(theirs.fencingToken());
      assertThat(mine.release()).isTrue();
    }
  }

  private static CompletableFuture<Lease> acquireAsync(DefaultLockClient client, String name) {
    return client.lock(name, LockOptions.fixed(Duration.ofSeconds(30))).acquireAsync(Duration.ofSeconds(30))
        .toCompletableFuture();
  }

  /** Waits until the server's clock is past the millisecond it reads now. */
  private static void awaitNextServerMillisecond(RedisServer server) throws InterruptedException {
    long start = serverMillis(server);
    assertThat(eventually(Duration.ofSeconds(5), () -> serverMillis(server) > start)).isTrue();
  }

  private static long serverMillis(RedisServer server) {
    List<String> time = List.of(server.command("TIME").split("\\s+"));
    return Long.parseLong(time.get(0)) * 1000 + Long.parseLong(time.get(1)) / 1000;
  }
}
