package io.locksmith.redis;

import static io.locksmith.tck.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.BackendUnavailableException;
import io.locksmith.ClientOptions;
import io.locksmith.DistributedLock;
import io.locksmith.Lease;
import io.locksmith.LeaseSource;
import io.locksmith.LockInfo;
import io.locksmith.LockOptions;
import io.locksmith.testkit.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Waiting across a Redis outage (issue 13 item 2), against a real server that is killed and restarted
 * on its port, or paused ({@code SIGSTOP}) so that commands time out and run when it resumes. The
 * outages last a fixed time: that length is the fault being injected, not a way to synchronise.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class OutageWaitTest {
  /** Short, since the hangs below are multiples of it; a local server answers in well under 1 s. */
  private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(1);
  private static final LockOptions LONG = LockOptions.fixed(Duration.ofSeconds(30));

  private RedisServer server;
  private final List<RedisLockClient> clients = new ArrayList<>();

  @BeforeEach
  void startServer() {
    server = RedisServer.start();
  }

  @AfterEach
  void stopAll() {
    server.resume();
    clients.forEach(RedisLockClient::close);
    server.close();
  }

  private RedisLockClient client() {
    RedisLockClient c = RedisLockClient.builder().uri(server.uri()).commandTimeout(COMMAND_TIMEOUT)
        .options(ClientOptions.builder().namespace("outage").build()).build();
    clients.add(c);
    return c;
  }

  private static long millisSince(long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - nanos);
  }

  /**
   * Regression: kill -9 and restart 3 s later failed every waiting acquisition with {@code
   * BackendUnavailableException} at its first round during the outage. Each lock was held by another
   * client with a 2 s fixed lease, so every waiter's backstop round falls into the outage; the restart is
   * empty, so the waiters can only be granted after it: by riding it out. (The leases were 1 s, and the
   * three acquisitions, three waiters and their registration checks did not always fit in that on a loaded
   * host; the outage grew with them, to the lease plus a command timeout.)
   */
  @Test
  void waitingAcquisitionsRideOutAKillAndRestart() throws Exception {
    RedisLockClient holder = client();
    RedisLockClient waiter = client();
    LockOptions brief = LockOptions.fixed(Duration.ofSeconds(2));
    for (String name : List.of("kill-acquire", "kill-lock", "kill-async")) {
      holder.lock(name, brief).acquire();
    }
    AtomicReference<Long> lockedAt = new AtomicReference<>();
    CompletableFuture<Lease> acquired = CompletableFuture.supplyAsync(() -> {
      try {
        return waiter.lock("kill-acquire", LONG).acquire(Duration.ofSeconds(30));
      } catch (InterruptedException e) {
        throw new IllegalStateException(e);
      }
    });
    DistributedLock viewLock = waiter.lock("kill-lock", LONG);
    CompletableFuture<Void> locked = CompletableFuture.runAsync(() -> {
      viewLock.lock();
      lockedAt.set(System.nanoTime());
      viewLock.unlock();
    });
    CompletableFuture<Lease> async = waiter.lock("kill-async", LONG).acquireAsync(Duration.ofSeconds(30))
        .toCompletableFuture();
    for (String name : List.of("kill-acquire", "kill-lock", "kill-async")) {
      assertThat(eventually(Duration.ofSeconds(10), () -> holder.inspect(name).map(LockInfo::waiters)
          .equals(Optional.of(1)))).as("waiter of %s registered", name).isTrue();
    }

    Map<String, CompletableFuture<?>> waits = Map.of("acquire(30 s)", acquired, "lock()", locked,
        "acquireAsync(30 s)", async);
    // precondition: the holders' leases have not run out yet, so no waiter was granted before the outage
    waits.forEach((what, f) -> assertThat(f).as("%s still waiting before the kill (setup within the holders'"
        + " 2 s leases)", what).isNotDone());
    server.kill();
    // the outage (the injected fault, not a synchronisation): the holders' 2 s leases plus a 1 s command
    // timeout, so every backstop round falls in it
    Thread.sleep(2_000 + COMMAND_TIMEOUT.toMillis());
    waits.forEach((what, f) -> assertThat(f).as("%s still waiting at the end of the outage", what)
        .isNotCompletedExceptionally());
    long restartedAt = System.nanoTime();
    server.restart();

    Lease lease = acquired.get(15, TimeUnit.SECONDS);
    long acquireMillis = millisSince(restartedAt);
    locked.get(15, TimeUnit.SECONDS);
    Lease asyncLease = async.get(15, TimeUnit.SECONDS);
    long asyncMillis = millisSince(restartedAt);
    assertThat(lockedAt.get()).as("lock() granted after the restart").isGreaterThan(restartedAt);
    assertThat(lease.isHeld()).isTrue();
    assertThat(asyncLease.isHeld()).isTrue();
    System.out.printf("[outage] kill -9, restart after 3 s: acquire(30 s) granted %d ms after restart() began,"
        + " lock() %d ms, acquireAsync(30 s) %d ms%n", acquireMillis,
        TimeUnit.NANOSECONDS.toMillis(lockedAt.get() - restartedAt), asyncMillis);
    assertThat(lease.release()).isTrue();
    assertThat(asyncLease.release()).isTrue();
    assertThat(eventually(Duration.ofSeconds(5), () -> waiter.backend.registeredWaiterCount() == 0))
        .as("no waiter left registered").isTrue();
  }

  /**
   * Regression: on a hung server {@code acquire(10 s)} failed at the command timeout. It now keeps
   * trying and is granted when the server resumes after twice the command timeout. The first attempt was
   * buffered by the hung server and runs when it resumes: the retry of the same acquisition finds that
   * grant and adopts it, with one hold and the token the server holds, so that one release frees the lock.
   */
  @Test
  void aWaitOnAHungServerUsesItsWaitAndAdoptsItsOwnLateGrant() throws Exception {
    RedisLockClient waiter = client();
    RedisLockClient other = client();
    server.pause();
    long start = System.nanoTime();
    CompletableFuture<Lease> acquired = CompletableFuture.supplyAsync(() -> {
      try {
        return waiter.lock("hung", LONG).acquire(Duration.ofSeconds(10));
      } catch (InterruptedException e) {
        throw new IllegalStateException(e);
      }
    });
    long hangMillis = 2 * COMMAND_TIMEOUT.toMillis(); // the injected hang: twice the command timeout
    Thread.sleep(hangMillis);
    assertThat(acquired).as("still waiting after twice the command timeout").isNotCompletedExceptionally();
    server.resume();

    Lease lease = acquired.get(15, TimeUnit.SECONDS);
    long grantedMillis = millisSince(start);
    System.out.printf("[outage] hung %d ms: acquire(10 s) granted after %d ms%n", hangMillis, grantedMillis);
    // real time is the point: not before the resume (the hang), and within the wait 10 s + one command
    // timeout 1 s + allowance 1 s = 12 s
    assertThat(grantedMillis).as("granted after the resume, within the wait + one command timeout")
        .isBetween(hangMillis, 12_000L);
    LockInfo info = other.inspect("hung").orElseThrow();
    assertThat(info.owner()).startsWith(waiter.clientId() + ":");
    assertThat(info.holdCount()).as("one hold, whatever the late attempts did").isEqualTo(1);
    assertThat(info.fencingToken()).as("the lease carries the token the server holds")
        .isEqualTo(lease.fencingToken());
    assertThat(lease.release()).isTrue();
    assertThat(other.inspect("hung")).as("one release frees it").isEmpty();
    assertThat(eventually(Duration.ofSeconds(5), () -> waiter.backend.registeredWaiterCount() == 0)).isTrue();
  }

  /** Calls that do not wait still fail fast during an outage, dead or hung. */
  @Test
  void callsThatDoNotWaitFailFast() {
    RedisLockClient c = client();
    DistributedLock lock = c.lock("no-wait", LONG);
    server.pause();
    long start = System.nanoTime();
    assertThatThrownBy(lock::tryAcquire).isInstanceOf(BackendUnavailableException.class);
    // real time is the point: one command timeout 1 s + allowance 1 s = 2 s (a wait would retry for longer)
    assertThat(millisSince(start)).as("hung: one command timeout").isLessThan(COMMAND_TIMEOUT.toMillis() + 1_000);
    server.kill();
    start = System.nanoTime();
    assertThatThrownBy(lock::tryLock).isInstanceOf(BackendUnavailableException.class);
    assertThatThrownBy(lock::tryAcquire).isInstanceOf(BackendUnavailableException.class);
    // real time is the point: refused connects fail at once; bound as above, 1 s + 1 s = 2 s
    assertThat(millisSince(start)).as("dead: at once").isLessThan(COMMAND_TIMEOUT.toMillis() + 1_000);
  }

  /**
   * Regression ("phantom holders"): acquire attempts that time out on a hung server run when it resumes
   * and took the lock for a whole 30 s lease, although their callers had given up: a {@code tryAcquire()}
   * that failed at the command timeout and an {@code acquire(3 s)} that ran out, for the exclusive lock,
   * the fair lock and a semaphore. They are given back once the server answers, so another client, or
   * the same one, gets each lock promptly.
   */
  @Test
  void grantsAppliedAfterTheirCallerGaveUpAreGivenBack() throws Exception {
    RedisLockClient gaveUp = client();
    RedisLockClient other = client();
    server.pause();
    Map<String, LeaseSource> tried = Map.of(
        "exclusive tryAcquire()", gaveUp.lock("phantom-try", LONG),
        "fair tryAcquire()", gaveUp.fairLock("phantom-fair", LONG),
        "semaphore tryAcquire()", gaveUp.semaphore("phantom-sem", 1, LONG));
    List<CompletableFuture<?>> calls = new ArrayList<>();
    tried.values().forEach(source -> calls.add(CompletableFuture.supplyAsync(source::tryAcquire)));
    calls.add(CompletableFuture.supplyAsync(() -> {
      try {
        return gaveUp.lock("phantom-wait", LONG).acquire(Duration.ofSeconds(3));
      } catch (InterruptedException e) {
        throw new IllegalStateException(e);
      }
    }));
    for (CompletableFuture<?> call : calls) {
      assertThatThrownBy(() -> call.get(20, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
          .hasCauseInstanceOf(BackendUnavailableException.class);
    }
    long resumedAt = System.nanoTime();
    server.resume();

    Map<String, LeaseSource> next = Map.of(
        "exclusive, another client", other.lock("phantom-try", LONG),
        "fair, another client", other.fairLock("phantom-fair", LONG),
        "semaphore, another client", other.semaphore("phantom-sem", 1, LONG),
        "exclusive after a wait ran out, the same client", gaveUp.lock("phantom-wait", LONG));
    for (Map.Entry<String, LeaseSource> e : next.entrySet()) {
      Optional<Lease> lease = e.getValue().tryAcquire(Duration.ofSeconds(5));
      long millis = millisSince(resumedAt);
      assertThat(lease).as("%s: the lock is free again", e.getKey()).isPresent();
      System.out.printf("[outage] phantom given back: %s acquired %d ms after the resume%n", e.getKey(), millis);
      assertThat(lease.get().release()).isTrue();
    }
    // real time is the point: half the 30 s lease the phantoms would otherwise hold = 15 s
    assertThat(millisSince(resumedAt)).as("well before the 30 s lease would have expired").isLessThan(15_000);
  }
}
