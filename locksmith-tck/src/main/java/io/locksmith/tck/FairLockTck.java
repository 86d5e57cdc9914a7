package io.locksmith.tck;

import static io.locksmith.tck.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.DistributedLock;
import io.locksmith.Lease;
import io.locksmith.LockClient;
import io.locksmith.LockOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The whole lock contract of {@link LockClientTck}, run on {@link LockClient#fairLock(String,
 * LockOptions)}, plus what only a fair lock promises: grants in order of arrival, a waiter that gives
 * up does not hold up the ones behind it, and a caller that does not wait never overtakes a queued
 * waiter.
 *
 * <p>The fair cases confirm that a waiter is queued through {@link DistributedLock#inspect()}'s
 * {@link io.locksmith.LockInfo#waiters()}, so a backend under this TCK must count its queued waiters
 * there.
 */
public abstract class FairLockTck extends LockClientTck {
  private static final Duration LONG_LEASE = Duration.ofSeconds(30);

  @Override
  protected DistributedLock lockUnderTest(LockClient client, String name, LockOptions options) {
    return client.fairLock(name, options);
  }

  /**
   * Waits until the lock's holder reports {@code count} queued waiters.
   *
   * @param observer a client to ask
   * @param count the expected number of queued waiters
   * @throws InterruptedException if interrupted while polling
   */
  protected final void awaitQueued(LockClient observer, int count) throws InterruptedException {
    DistributedLock lock = lock(observer, name());
    assertThat(eventually(Duration.ofSeconds(10),
        () -> lock.inspect().map(i -> i.waiters() == count).orElse(false)))
        .as("%d waiter(s) queued on the backend", count).isTrue();
  }

  @Test
  void waitersAcrossTwoClientsAreGrantedInArrivalOrder() throws Exception {
    LockClient a = client();
    LockClient b = client();
    Lease held = lock(a, name(), LockOptions.watched(LONG_LEASE)).acquire();
    int waiters = 6;
    List<Integer> order = java.util.Collections.synchronizedList(new ArrayList<>());
    List<CompletableFuture<Void>> done = new ArrayList<>();
    for (int i = 0; i < waiters; i++) {
      int index = i;
      LockClient c = i % 2 == 0 ? b : a;
      done.add(lock(c, name()).acquireAsync(Duration.ofSeconds(30)).toCompletableFuture()
          .thenAccept(lease -> {
            order.add(index);
            lease.release();
          }));
      awaitQueued(a, i + 1); // the next one arrives strictly after this one is queued
    }
    held.release();
    CompletableFuture.allOf(done.toArray(new CompletableFuture<?>[0])).get(30, TimeUnit.SECONDS);
    assertThat(order).as("grant order").containsExactly(0, 1, 2, 3, 4, 5);
  }

  @Test
  void aWaiterThatGivesUpDoesNotHoldUpTheNext() throws Exception {
    LockClient a = client();
    LockClient b = client();
    LockClient c = client();
    // the window is the impatient waiter's wait: it must be seen queued, and the next waiter seen queued
    // behind it, before it runs out. 500 ms is ample on a quiet machine; a slower test retries longer
    withGrowingWindow(Duration.ofMillis(500), 4, wait -> {
      Lease held = lock(a, name(), LockOptions.watched(LONG_LEASE)).acquire();
      // first in line, then cancelled
      CompletableFuture<Lease> cancelled =
          lock(b, name()).acquireAsync(Duration.ofSeconds(30)).toCompletableFuture();
      awaitQueued(a, 1);
      CompletableFuture<Lease> patient = lock(c, name()).acquireAsync(Duration.ofSeconds(30)).toCompletableFuture();
      awaitQueued(a, 2);
      assertThat(cancelled.cancel(false)).isTrue();
      awaitQueued(a, 1);
      held = handOff(held, patient);
      // first in line, then out of time
      CompletableFuture<Optional<Lease>> impatient = lock(b, name()).tryAcquireAsync(wait).toCompletableFuture();
      awaitQueuedWhile(a, 1, impatient, "the impatient waiter queued");
      CompletableFuture<Lease> next = lock(c, name()).acquireAsync(Duration.ofSeconds(30)).toCompletableFuture();
      try {
        awaitQueuedWhile(a, 2, impatient, "the next waiter queued behind the impatient one");
      } catch (RuntimeException missed) {
        held.release();
        next.thenAccept(Lease::release);
        throw missed;
      }
      assertThat(impatient.get(10, TimeUnit.SECONDS)).isEmpty();
      awaitQueued(a, 1);
      handOff(held, next).release();
    });
  }

  /**
   * Waits until {@code count} waiters are queued, as long as {@code pending} has not completed; if it
   * completed first (its wait ran out before the test saw the queue), the attempt's window was missed.
   */
  private void awaitQueuedWhile(LockClient observer, int count, CompletableFuture<?> pending, String what)
      throws InterruptedException {
    DistributedLock lock = lock(observer, name());
    boolean[] seen = new boolean[1];
    assertThat(eventually(Duration.ofSeconds(10), () -> {
      seen[0] = lock.inspect().map(i -> i.waiters() == count).orElse(false);
      return seen[0] || pending.isDone();
    })).as("%d waiter(s) queued on the backend", count).isTrue();
    if (!seen[0]) {
      throw windowMissed(what + " only after the impatient waiter's wait ran out");
    }
  }

  /** Releases {@code held} and expects {@code next} granted promptly: woken, not left to a backstop. */
  private static Lease handOff(Lease held, CompletableFuture<Lease> next) throws Exception {
    long releasedAt = System.nanoTime();
    assertThat(held.release()).isTrue();
    Lease lease = next.get(10, TimeUnit.SECONDS);
    assertThat(System.nanoTime() - releasedAt).as("hand-off time (ns)")
        .isLessThan(TimeUnit.SECONDS.toNanos(2));
    assertThat(lease.fencingToken()).isGreaterThan(held.fencingToken());
    return lease;
  }

  @Test
  void aCallerThatDoesNotWaitNeverOvertakesAQueuedWaiter() throws Exception {
    LockClient a = client();
    LockClient b = client();
    LockClient c = client();
    Lease held = lock(a, name(), LockOptions.watched(LONG_LEASE)).acquire();
    CompletableFuture<Lease> queued = lock(b, name()).acquireAsync(Duration.ofSeconds(30)).toCompletableFuture();
    awaitQueued(a, 1);
    held.release();
    // whether or not the queued waiter has taken the lock yet, it is its turn, not the newcomer's
    assertThat(lock(c, name()).tryAcquire()).isEmpty();
    assertThat(lock(c, name()).tryLock()).isFalse();
    Lease next = queued.get(10, TimeUnit.SECONDS);
    assertThat(lock(c, name()).tryAcquire()).as("held by the waiter now").isEmpty();
    next.release();
    assertThat(lock(c, name()).tryAcquire()).as("nobody queued, nobody holding").isPresent()
        .hasValueSatisfying(Lease::release);
  }

  @Test
  void aFairLockAndAnExclusiveLockOfTheSameNameAreDifferentLocks() throws Exception {
    LockClient a = client();
    LockClient b = client();
    try (Lease fair = lock(a, name()).tryAcquire().orElseThrow()) {
      assertThat(fair.isHeld()).isTrue();
      Optional<Lease> exclusive = b.lock(name()).tryAcquire();
      assertThat(exclusive).as("the exclusive lock of the same name is free").isPresent();
      exclusive.get().release();
    }
  }
}
