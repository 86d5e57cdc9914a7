package io.locksmith.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.ClientOptions;
import io.locksmith.DistributedLock;
import io.locksmith.Lease;
import io.locksmith.LockClient;
import io.locksmith.LockOptions;
import io.locksmith.injvm.InJvmLockServer;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Durations at the edges: rejected at build() with a clear message, or (a wait) taken as unbounded. */
@Timeout(30)
class DurationBoundsTest {
  private static final Duration FOREVER = ChronoUnit.FOREVER.getDuration();

  /**
   * Regression (issue 12 item 13): a lease too long for nanoseconds in a long was accepted by build()
   * and failed with an ArithmeticException from the client's drift computation; a drift floor as long
   * failed with one from build() itself.
   */
  @Test
  void absurdLeasesAndDriftFloorsAreRejectedAtBuild() {
    List<ThrowingCallable> builds = List.of(
        () -> LockOptions.fixed(FOREVER),
        () -> LockOptions.watched(FOREVER),
        () -> LockOptions.fixed(Duration.ofMillis(Long.MAX_VALUE)),
        () -> LockOptions.builder().watchedLease(LockOptions.MAX_LEASE_TIME.plusNanos(1)).build(),
        () -> LockOptions.fixed(LockOptions.MAX_LEASE_TIME.plusMillis(1)),
        () -> ClientOptions.builder().clockDrift(0.01, FOREVER).build());
    for (ThrowingCallable build : builds) {
      assertThatThrownBy(build).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at most");
    }
    assertThat(LockOptions.fixed(LockOptions.MAX_LEASE_TIME).leaseTime()).isEqualTo(Duration.ofDays(7));
    try (LockClient client = new InJvmLockServer().newClient()) {
      Lease longest = client.lock("longest", LockOptions.fixed(LockOptions.MAX_LEASE_TIME)).tryAcquire().orElseThrow();
      assertThat(longest.remainingValidity()).isGreaterThan(Duration.ofDays(6));
      assertThat(longest.release()).isTrue();
    }
  }

  /** Issue 13 item 11: watched leases of 10–15 ms passed validation and were lost within a second. */
  @Test
  void watchedLeasesTooShortToRenewAreRejected() {
    for (Duration tooShort : List.of(Duration.ofMillis(10), Duration.ofMillis(15), Duration.ofMillis(99))) {
      assertThatThrownBy(() -> LockOptions.watched(tooShort)).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("watched lease must be at least 100 ms");
      assertThatThrownBy(() -> LockOptions.fixed(Duration.ofSeconds(1)).mutate().watchedLease(tooShort).build())
          .isInstanceOf(IllegalArgumentException.class);
      assertThat(LockOptions.fixed(tooShort).leaseTime()).as("nothing renews a fixed lease").isEqualTo(tooShort);
    }
    assertThat(LockOptions.watched(LockOptions.MIN_WATCHED_LEASE_TIME).renewalInterval())
        .isEqualTo(Duration.ofNanos(Duration.ofMillis(100).toNanos() / 3));
  }

  /**
   * A wait longer than anyone lives means "as long as it takes": the deadline arithmetic must neither
   * overflow into a wait that is already over nor throw.
   */
  @Test
  void hugeWaitsWaitAsLongAsItTakes() throws Exception {
    InJvmLockServer server = new InJvmLockServer();
    ExecutorService threads = Executors.newCachedThreadPool();
    try (LockClient holder = server.newClient(); LockClient waiter = server.newClient()) {
      DistributedLock lock = waiter.lock("huge-wait");
      List<Callable<Boolean>> waits = List.of(
          () -> lock.acquire(FOREVER).release(),
          () -> lock.acquire(Duration.ofSeconds(Long.MAX_VALUE / 2)).release(),
          () -> lock.tryAcquire(Duration.ofDays(100_000)).map(Lease::release).orElse(false),
          () -> lock.tryAcquire(Duration.ofNanos(Long.MAX_VALUE - 1)).map(Lease::release).orElse(false),
          () -> {
            boolean got = lock.tryLock(Long.MAX_VALUE, TimeUnit.DAYS);
            lock.unlock();
            return got;
          },
          () -> lock.tryLock(Long.MAX_VALUE - 1, TimeUnit.NANOSECONDS) && unlock(lock),
          () -> lock.acquireAsync(FOREVER).toCompletableFuture().get().release(),
          () -> lock.tryAcquireAsync(Duration.ofDays(100_000)).toCompletableFuture().get()
              .map(Lease::release).orElse(false));
      for (Callable<Boolean> wait : waits) {
        Lease held = holder.lock("huge-wait").acquire();
        Future<Boolean> waiting = threads.submit(wait);
        assertThat(Eventually.of(() -> waiter.inspect("huge-wait").map(i -> i.waiters() == 1).orElse(false)))
            .as("waiting, not timed out").isTrue();
        assertThat(waiting.isDone()).isFalse();
        held.release();
        assertThat(waiting.get(10, TimeUnit.SECONDS)).as("granted after the release").isTrue();
      }
    } finally {
      threads.shutdownNow();
    }
  }

  private static boolean unlock(DistributedLock lock) {
    lock.unlock();
    return true;
  }

  /** Polls with a deadline: for a state another thread reaches. */
  private static final class Eventually {
    static boolean of(Callable<Boolean> condition) throws Exception {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (System.nanoTime() - deadline < 0) {
        if (condition.call()) {
          return true;
        }
        Thread.sleep(5);
      }
      return condition.call();
    }
  }
}
