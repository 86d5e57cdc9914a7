package io.locksmith.redis;

import static io.locksmith.tck.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.Lease;
import io.locksmith.LeaseState;
import io.locksmith.LockOptions;
import io.locksmith.testkit.RedisServer;
import io.locksmith.testkit.RedisServerExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The exclusive lock's local hand-off (issue 16): a release that finds another acquisition of the same
 * client waiting grants it the lock in the same script, with a new, larger token, and after
 * {@link RedisBackend#HAND_OFF_COHORT} hand-offs in a row releases plainly so that other clients get in.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisLocalHandOffTest {
  @RegisterExtension
  static final RedisServerExtension REDIS = new RedisServerExtension();

  private static RedisLockClient client() {
    return RedisLockClient.create(REDIS.server().uri());
  }

  @Test
  void aReleaseHandsTheLockToTheNextLocalWaiterInOneScriptWithALargerToken() throws Exception {
    RedisServer server = REDIS.server();
    String name = "hand-off-one-script";
    String lockKey = new RedisKeys("locksmith").lock(name);
    try (RedisLockClient locks = client();
        RedisMonitor monitor = new RedisMonitor(server.host(), server.port())) {
      Lease held = locks.lock(name, LockOptions.watched(Duration.ofSeconds(30))).acquire();
      server.command("ECHO", "start-marker");
      monitor.until("start-marker");
      Waiter waiting = Waiter.start(() -> locks.lock(name, LockOptions.watched(Duration.ofSeconds(30)))
          .acquire(Duration.ofSeconds(20)));
      waiting.awaitParked();
      assertThat(server.command("ZCARD", RedisKeys.waiters(lockKey)))
          .as("a waiter behind a lease of its own client waits locally: nothing registered").isEqualTo("0");
      assertThat(locks.backend.registeredWaiterCount()).isZero();

      assertThat(held.release()).isTrue();
      Lease next = waiting.get();

      server.command("ECHO", "end-marker");
      List<String> sent = monitor.until("end-marker").stream().filter(l -> !RedisMonitor.fromScript(l))
          .filter(l -> !l.contains("\"ZCARD\"")) // this test's own look
          .collect(Collectors.toList());
      assertThat(sent).as("release and grant: one script; the waiter never asked, nobody was woken").hasSize(1);
      assertThat(sent.get(0)).containsIgnoringCase("evalsha").contains(RedisScript.RELEASE_HANDOFF.sha);
      assertThat(next.fencingToken()).as("a fresh grant's token").isGreaterThan(held.fencingToken());
      assertThat(locks.inspect(name)).hasValueSatisfying(info -> {
        assertThat(info.holdCount()).isEqualTo(1);
        assertThat(info.fencingToken()).isEqualTo(next.fencingToken());
        assertThat(info.waiters()).as("the waiter's registration was dropped with the grant").isZero();
      });
      assertThat(LockValues.field(server.command("GET", lockKey), LockValues.RUN)).as("one hand-off in a row").isEqualTo("1");
      assertThat(held.state()).isEqualTo(LeaseState.RELEASED);
      assertThat(next.state()).isEqualTo(LeaseState.HELD);
      assertThat(held.release()).as("released once only").isFalse();
      assertThat(next.release()).isTrue();
      assertThat(locks.inspect(name)).as("nobody holds it").isEmpty();
    }
  }

  /**
   * Threads of one client pass the lock among themselves while a thread of another client waits: the
   * cohort limit lets it in, every grant's token is larger than the one before (hand-offs included), and
   * no two holders overlap.
   */
  @Test
  void anotherClientGetsInWhileOneClientsThreadsPassTheLockAroundAndTokensOnlyGrow() throws Exception {
    String name = "hand-off-cohort";
    int threads = 4;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try (RedisLockClient busy = client(); RedisLockClient other = client()) {
      AtomicBoolean stop = new AtomicBoolean();
      AtomicInteger holders = new AtomicInteger();
      AtomicInteger overlaps = new AtomicInteger();
      List<Long> tokens = new ArrayList<>(); // in grant order: appended while holding the lock
      CountDownLatch cycling = new CountDownLatch(50);
      List<Future<?>> workers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        workers.add(pool.submit(() -> {
          while (!stop.get()) {
            Lease lease = busy.lock(name).tryAcquire(Duration.ofSeconds(20)).orElseThrow();
            if (holders.incrementAndGet() != 1) {
              overlaps.incrementAndGet();
            }
            synchronized (tokens) {
              tokens.add(lease.fencingToken());
            }
            holders.decrementAndGet();
            lease.release();
            cycling.countDown();
          }
          return null;
        }));
      }
      assertThat(cycling.await(20, TimeUnit.SECONDS)).as("the busy client's threads cycle").isTrue();

      Lease outsider = other.lock(name).tryAcquire(Duration.ofSeconds(20)).orElse(null);
      assertThat(outsider).as("another client got the lock while the busy threads kept asking").isNotNull();
      if (holders.incrementAndGet() != 1) {
        overlaps.incrementAndGet();
      }
      synchronized (tokens) {
        tokens.add(outsider.fencingToken());
      }
      holders.decrementAndGet();
      outsider.release();
      stop.set(true);
      for (Future<?> w : workers) {
        w.get(30, TimeUnit.SECONDS);
      }
      assertThat(overlaps.get()).as("never two holders").isZero();
      synchronized (tokens) {
        assertThat(tokens).as("every grant's token larger than the one before").isSorted().doesNotHaveDuplicates();
        assertThat(tokens.size()).isGreaterThan(50);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * After {@link RedisBackend#HAND_OFF_COHORT} hand-offs in a row the next release is a plain one that
   * wakes the first registered waiter, another client's here, and keeps the lock for it: the local
   * waiter, which asks again at once, is refused until the other client had its turn.
   */
  @Test
  void afterTheCohortLimitTheLockIsReservedForTheWaiterOfAnotherClient() throws Exception {
    String name = "hand-off-reserved";
    String lockKey = new RedisKeys("locksmith").lock(name);
    ExecutorService pool = Executors.newCachedThreadPool();
    try (RedisLockClient busy = client(); RedisLockClient other = client()) {
      Lease held = busy.lock(name).acquire();
      Future<Lease> outsider = pool.submit(() -> other.lock(name).acquire(Duration.ofSeconds(30)));
      assertThat(eventually(Duration.ofSeconds(10), () -> other.backend.registeredWaiterCount() == 1))
          .as("the other client's waiter registered first").isTrue();
      long lastToken = held.fencingToken();
      for (int handOff = 1; handOff <= RedisBackend.HAND_OFF_COHORT + 1; handOff++) {
        Waiter local = Waiter.start(() -> busy.lock(name).acquire(Duration.ofSeconds(30)));
        local.awaitParked();
        assertThat(held.release()).isTrue();
        if (handOff <= RedisBackend.HAND_OFF_COHORT) {
          held = local.get();
          assertThat(held.fencingToken()).as("hand-off " + handOff + ": a larger token").isGreaterThan(lastToken);
          lastToken = held.fencingToken();
          assertThat(LockValues.field(server().command("GET", lockKey), LockValues.RUN)).isEqualTo(Integer.toString(handOff));
          assertThat(outsider.isDone()).as("the other client still waits").isFalse();
        } else {
          Lease theirs = outsider.get(10, TimeUnit.SECONDS);
          assertThat(theirs.fencingToken()).as("a larger token for the other client").isGreaterThan(lastToken);
          assertThat(local.result.isDone()).as("the local waiter was refused while the other client held it")
              .isFalse();
          assertThat(busy.inspect(name)).hasValueSatisfying(info -> assertThat(info.fencingToken())
              .isEqualTo(theirs.fencingToken()));
          assertThat(LockValues.field(server().command("GET", lockKey), LockValues.RUN)).as("a fresh grant line")
              .isEqualTo("0");
          assertThat(theirs.release()).isTrue();
          Lease mine = local.get();
          assertThat(mine.fencingToken()).isGreaterThan(theirs.fencingToken());
          assertThat(mine.release()).isTrue();
        }
      }
      assertThat(busy.inspect(name)).as("nobody holds it").isEmpty();
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * Waiters of the releasing client that registered on the server (they asked before their client held
   * the lock) wait in its local queue too: they are no reason to end the run of hand-offs. Before, the
   * release after the cohort limit woke one of them and reserved the lock for it, a plain release, a
   * {@code PUBLISH} and an acquire instead of one hand-off (the herd bench: 1.40 commands per hand-off).
   */
  @Test
  void registeredWaitersOfTheReleasingClientDoNotEndTheRun() throws Exception {
    String name = "hand-off-own-registered";
    String lockKey = new RedisKeys("locksmith").lock(name);
    int waiters = RedisBackend.HAND_OFF_COHORT + 3;
    try (RedisLockClient busy = client(); RedisLockClient other = client()) {
      Lease first = other.lock(name).acquire();
      List<Waiter> queued = new ArrayList<>();
      for (int i = 0; i < waiters; i++) {
        Waiter w = Waiter.start(() -> busy.lock(name).acquire(Duration.ofSeconds(30)));
        w.awaitParked();
        queued.add(w);
      }
      assertThat(eventually(Duration.ofSeconds(10), () -> busy.backend.registeredWaiterCount() == waiters))
          .as("all of them asked the server, which refused and registered them").isTrue();
      assertThat(first.release()).isTrue(); // wakes one of them: a fresh grant line
      List<Waiter> served = new ArrayList<>();
      Lease held = nextHolder(queued, served);
      long lastToken = held.fencingToken();
      for (int handOff = 1; handOff < waiters; handOff++) {
        assertThat(held.release()).isTrue();
        held = nextHolder(queued, served);
        assertThat(LockValues.field(server().command("GET", lockKey), LockValues.RUN)).as("hand-off %d of one run", handOff)
            .isEqualTo(Integer.toString(handOff));
        assertThat(held.fencingToken()).isGreaterThan(lastToken);
        lastToken = held.fencingToken();
      }
      assertThat(held.release()).isTrue();
      assertThat(busy.inspect(name)).isEmpty();
    }
  }

  /** The one waiter of {@code queued} not in {@code served} that now holds the lock, added to {@code served}. */
  private static Lease nextHolder(List<Waiter> queued, List<Waiter> served) throws Exception {
    assertThat(eventually(Duration.ofSeconds(10), () -> queued.stream()
        .anyMatch(w -> !served.contains(w) && w.result.isDone()))).as("a waiter got the lock").isTrue();
    Waiter next = queued.stream().filter(w -> !served.contains(w) && w.result.isDone()).findFirst().orElseThrow();
    served.add(next);
    return next.get();
  }

  /** A reservation whose waiter gave up is dropped when its wake-up is passed on: the lock is free again. */
  @Test
  void aReservationForAWaiterThatIsGoneDoesNotBlockTheLock() throws Exception {
    RedisServer server = REDIS.server();
    String name = "hand-off-reservation-gone";
    String lockKey = new RedisKeys("locksmith").lock(name);
    try (RedisLockClient locks = client()) {
      server.command("SET", lockKey, "0|0|0|r|someone:w1", "PX", "30000"); // reserved (lock-value.lua)
      assertThat(locks.lock(name).tryAcquire()).as("reserved for another waiter").isEmpty();
      locks.backend.passWakeup(name, "someone:w1");
      assertThat(eventually(Duration.ofSeconds(10), () -> "0".equals(server.command("EXISTS", lockKey))))
          .as("the reservation was dropped").isTrue();
      Lease lease = locks.lock(name).tryAcquire().orElseThrow();
      assertThat(lease.release()).isTrue();
    }
  }

  /** A lease lost (force-unlocked by an operator) hands nothing over: the local waiter asks and gets it. */
  @Test
  void aLocalWaiterGetsTheLockWhenItsClientsLeaseIsLost() throws Exception {
    String name = "hand-off-lost-holder";
    try (RedisLockClient locks = client(); RedisLockClient operator = client()) {
      Lease held = locks.lock(name).acquire();
      Waiter waiting = Waiter.start(() -> locks.lock(name).acquire(Duration.ofSeconds(20)));
      waiting.awaitParked();
      assertThat(operator.lock(name).forceUnlock()).isTrue();
      Lease next = waiting.get();
      assertThat(held.state()).isEqualTo(LeaseState.LOST);
      assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
      assertThat(next.release()).isTrue();
    }
  }

  /**
   * A lease released after a delay is not handed to a waiter of its own client (which would end the
   * delay at once): that waiter asks the server, is refused, and gets the lock when the delay is over.
   */
  @Test
  void aLeaseReleasedAfterADelayIsNotHandedOffBeforeTheDelay() throws Exception {
    String name = "hand-off-release-after";
    Duration delay = Duration.ofMillis(800);
    try (RedisLockClient locks = client()) {
      Lease held = locks.lock(name).acquire();
      Waiter waiting = Waiter.start(() -> locks.lock(name).acquire(Duration.ofSeconds(20)));
      waiting.awaitParked();
      long calledAt = System.nanoTime();
      assertThat(held.releaseAfter(delay)).isTrue();
      Lease next = waiting.get();
      assertThat(Duration.ofNanos(System.nanoTime() - calledAt)).as("granted only after the delay")
          .isGreaterThanOrEqualTo(delay.minusMillis(20));
      assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
      assertThat(next.release()).isTrue();
    }
  }

  /** A local waiter that gives up leaves nothing behind, and the next one still gets the lock. */
  @Test
  void aLocalWaiterThatGivesUpIsSkipped() throws Exception {
    String name = "hand-off-gave-up";
    try (RedisLockClient locks = client()) {
      Lease held = locks.lock(name).acquire();
      assertThat(locks.lock(name).tryAcquire(Duration.ofMillis(50))).as("held by its own client").isEmpty();
      Waiter waiting = Waiter.start(() -> locks.lock(name).acquire(Duration.ofSeconds(20)));
      waiting.awaitParked();
      assertThat(held.release()).isTrue();
      Lease next = waiting.get();
      assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
      assertThat(next.release()).isTrue();
      assertThat(locks.inspect(name)).isEmpty();
    }
  }

  /**
   * A waiter claimed for a hand-off whose acquisition ends while the hand-off is on its way (the server
   * paused, so the script waits in its socket): the grant the script then makes for it is given back, and
   * the lock is free for another client at once rather than held by an owner nobody has until its lease
   * runs out. Three ways to end it: the client closes, the caller cancels, the waiting thread is
   * interrupted.
   */
  @Test
  void aHandOffInFlightWhenItsClientClosesIsGivenBack() throws Exception {
    String name = "hand-off-then-close";
    RedisServer server = server();
    try (RedisLockClient other = client()) {
      RedisLockClient locks = client();
      Lease held = locks.lock(name, LockOptions.watched(Duration.ofSeconds(30))).acquire();
      Waiter waiting = Waiter.start(() -> locks.lock(name, LockOptions.watched(Duration.ofSeconds(30)))
          .acquire(Duration.ofSeconds(20)));
      waiting.awaitParked();
      CompletableFuture<Void> closing;
      server.pause();
      try {
        held.releaseAsync(); // the waiter is claimed on this thread; the script waits in the socket
        closing = CompletableFuture.runAsync(locks::close);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> closing.get(300, TimeUnit.MILLISECONDS))
            .as("close() waits for the hand-off in flight").isInstanceOf(java.util.concurrent.TimeoutException.class);
      } finally {
        server.resume();
      }
      closing.get(10, TimeUnit.SECONDS);
      org.assertj.core.api.Assertions.assertThatThrownBy(waiting::get).as("the waiter's client closed")
          .hasRootCauseInstanceOf(IllegalStateException.class);
      assertThat(other.inspect(name)).as("given back before close() returned").isEmpty();
      assertFreeFor(other, name, held);
    }
  }

  @Test
  void aHandOffInFlightForACancelledWaiterIsGivenBack() throws Exception {
    String name = "hand-off-then-cancel";
    RedisServer server = server();
    try (RedisLockClient locks = client(); RedisLockClient other = client()) {
      Lease held = locks.lock(name, LockOptions.watched(Duration.ofSeconds(30))).acquire();
      CompletableFuture<Lease> waiting = locks.lock(name, LockOptions.watched(Duration.ofSeconds(30)))
          .acquireAsync(Duration.ofSeconds(20)).toCompletableFuture();
      assertThat(waiting).as("waits behind its own client's lease").isNotDone();
      server.pause();
      try {
        held.releaseAsync();
        assertThat(waiting.cancel(true)).isTrue();
      } finally {
        server.resume();
      }
      assertThat(eventually(Duration.ofSeconds(5), () -> other.inspect(name).isEmpty()))
          .as("the grant made for the cancelled waiter was given back").isTrue();
      assertFreeFor(other, name, held);
      assertThat(locks.lock(name).tryAcquire()).as("and its client can take it again").isPresent()
          .get().satisfies(l -> assertThat(l.release()).isTrue());
    }
  }

  @Test
  void aHandOffInFlightForAnInterruptedWaiterIsGivenBack() throws Exception {
    String name = "hand-off-then-interrupt";
    RedisServer server = server();
    try (RedisLockClient locks = client(); RedisLockClient other = client()) {
      Lease held = locks.lock(name, LockOptions.watched(Duration.ofSeconds(30))).acquire();
      Waiter waiting = Waiter.start(() -> locks.lock(name, LockOptions.watched(Duration.ofSeconds(30)))
          .acquire(Duration.ofSeconds(20)));
      waiting.awaitParked();
      server.pause();
      try {
        held.releaseAsync();
        waiting.thread.interrupt();
        org.assertj.core.api.Assertions.assertThatThrownBy(waiting::get).as("the interrupted waiter gave up")
            .isInstanceOf(java.util.concurrent.ExecutionException.class);
      } finally {
        server.resume();
      }
      assertThat(eventually(Duration.ofSeconds(5), () -> other.inspect(name).isEmpty()))
          .as("the grant made for the interrupted waiter was given back").isTrue();
      assertFreeFor(other, name, held);
    }
  }

  /** {@code other} takes the lock at once, with a token past the {@code before} holder's. */
  private static void assertFreeFor(RedisLockClient other, String name, Lease before) {
    Lease lease = other.lock(name).tryAcquire().orElseThrow();
    assertThat(lease.fencingToken()).isGreaterThan(before.fencingToken());
    assertThat(lease.release()).isTrue();
  }

  /** A thread acquiring with a wait, whose parking shows that it waits. */
  /**
   * A claimed waiter's own deadline timer is cancelled; if the release that carries its hand-off gets no
   * answer, the waiter must still end within its wait plus one command timeout (architecture.md's bound),
   * not send another round first (a reviewer found it did: wait plus two command timeouts).
   *
   * <p>The command timeout is longer than the wait plus the slack, so the hand-off may be sent at any point of
   * the wait: correct, the wait ends one command timeout after it (about 3 s); with the extra round, two
   * command timeouts after it (about 6 s), past the bound of wait + command timeout + 1 s slack (5 s). The
   * hand-off is sent as soon as the waiter waits, so a stalled test thread has most of the wait to get there
   * (it used to be sent 800 ms into a 1 s wait, after pausing the server, and a loaded host overran that).
   */
  @Test
  void aHandOffThatGetsNoAnswerEndsTheWaitWithinItsBound() throws Exception {
    Duration command = Duration.ofSeconds(3);
    Duration wait = Duration.ofSeconds(1);
    long slackMillis = 1000;
    RedisServer server = server();
    String name = "hand-off-unanswered";
    try (RedisLockClient locks = RedisLockClient.builder().uri(server.uri()).commandTimeout(command).build()) {
      Lease held = locks.lock(name, LockOptions.watched(Duration.ofSeconds(30))).acquire();
      long started = System.nanoTime();
      Waiter waiting = Waiter.start(() -> locks.lock(name, LockOptions.watched(Duration.ofSeconds(30))).acquire(wait));
      waiting.awaitParked(); // it waits locally, behind its own client's lease (renewed only 10 s from now)
      server.pause();
      try {
        long releasing = System.nanoTime();
        held.releaseAsync(); // the hand-off reaches a server that does not answer
        assertThat(TimeUnit.NANOSECONDS.toMillis(releasing - started))
            .as("precondition: ms into the wait when the hand-off was sent (must be before the wait ended)")
            .isLessThan(wait.toMillis());
        Throwable failure = org.assertj.core.api.Assertions.catchThrowable(() -> waiting.result.get(20, TimeUnit.SECONDS));
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        assertThat(failure).as("no lock while the server does not answer").isNotNull()
            .hasCauseInstanceOf(io.locksmith.BackendUnavailableException.class);
        assertThat(tookMillis).as("ended within wait + one command timeout (+ %d ms slack)", slackMillis)
            .isLessThan(wait.plus(command).toMillis() + slackMillis);
      } finally {
        server.resume();
      }
    }
  }

  private static final class Waiter {
    final CompletableFuture<Lease> result = new CompletableFuture<>();
    final Thread thread;

    private Waiter(java.util.concurrent.Callable<Lease> acquire) {
      thread = new Thread(() -> {
        try {
          result.complete(acquire.call());
        } catch (Throwable e) {
          result.completeExceptionally(e);
        }
      }, "local-waiter");
      thread.setDaemon(true);
    }

    static Waiter start(java.util.concurrent.Callable<Lease> acquire) {
      Waiter w = new Waiter(acquire);
      w.thread.start();
      return w;
    }

    /** Parked on its acquisition's result (the acquisition started and did not get the lock). */
    void awaitParked() throws InterruptedException {
      assertThat(eventually(Duration.ofSeconds(10), () -> thread.getState() == Thread.State.TIMED_WAITING
          || thread.getState() == Thread.State.WAITING)).as("the waiter waits").isTrue();
    }

    Lease get() throws Exception {
      return result.get(10, TimeUnit.SECONDS);
    }
  }

  private static RedisServer server() {
    return REDIS.server();
  }
}
