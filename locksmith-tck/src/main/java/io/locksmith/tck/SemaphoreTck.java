package io.locksmith.tck;

import static io.locksmith.tck.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.DistributedSemaphore;
import io.locksmith.Lease;
import io.locksmith.LeaseState;
import io.locksmith.LockClient;
import io.locksmith.LockOptions;
import io.locksmith.PermitHolder;
import io.locksmith.SemaphoreInfo;
import io.locksmith.SemaphoreState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The semaphore contract ({@link DistributedSemaphore}) for every backend that offers
 * {@link io.locksmith.LockKind#SEMAPHORE}. A backend's test extends this class and implements
 * {@link #newClient()}; every case then runs against real instances of that backend.
 *
 * <pre>{@code
 * class RedisSemaphoreTckTest extends SemaphoreTck {
 *   @RegisterExtension static final RedisServerExtension REDIS = new RedisServerExtension();
 *   @Override protected LockClient newClient() { return RedisLockClient.create(REDIS.server().uri()); }
 * }
 * }</pre>
 *
 * <p>Contention cases use two client objects, i.e. separate connections. Nothing here sleeps to
 * synchronise: waits are the behaviour under test (a bounded {@code tryAcquire}), futures with a
 * deadline, or polls with a deadline. "Promptly" means well within the holders' 30 s leases.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public abstract class SemaphoreTck extends ContractSuite {
  /** For subclasses: a backend's suite. */
  protected SemaphoreTck() {
    super("tck-sem/");
  }

  /** A lease that outlives every case: anything freed faster was freed by a release or a wake-up. */
  protected static final LockOptions LONG = LockOptions.watched(Duration.ofSeconds(30));
  /** How long a woken waiter may take to hold its permit: far below {@link #LONG}'s lease. */
  protected static final Duration PROMPTLY = Duration.ofSeconds(3);

  private static Lease get(CompletableFuture<Lease> pending) throws Exception {
    return pending.get(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS);
  }

  // ------------------------------------------------------------------ permits

  @Test
  void nPermitsCanBeHeldAtOnceAndTheNextOneWaits() throws Exception {
    LockClient a = client();
    LockClient b = client();
    DistributedSemaphore inA = a.semaphore(name(), 3, LONG);
    DistributedSemaphore inB = b.semaphore(name(), 3, LONG);
    Lease first = inA.tryAcquire().orElseThrow();
    Lease second = inA.tryAcquire().orElseThrow();
    Lease third = inB.tryAcquire().orElseThrow();
    assertThat(List.of(first, second, third)).allSatisfy(l -> assertThat(l.isHeld()).isTrue());
    assertThat(inB.tryAcquire()).as("no fourth permit").isEmpty();
    assertThat(inA.tryAcquire(Duration.ofMillis(100))).as("not even after a wait").isEmpty();
    assertThat(inA.describe().taken()).isEqualTo(3);
    assertThat(second.release()).isTrue();
    Lease fourth = inB.tryAcquire().orElseThrow();
    assertThat(inA.tryAcquire()).isEmpty();
    for (Lease l : List.of(first, third, fourth)) {
      assertThat(l.release()).isTrue();
    }
    assertThat(inA.describe().taken()).isZero();
  }

  @Test
  void neverMoreHoldersThanPermitsUnderContention() throws Exception {
    LockClient a = client();
    LockClient b = client();
    int permits = 3;
    int rounds = 15;
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger maxInside = new AtomicInteger();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 8; t++) {
      DistributedSemaphore semaphore = (t % 2 == 0 ? a : b).semaphore(name(), permits, LONG);
      threads.add(new Thread(() -> {
        try {
          for (int i = 0; i < rounds; i++) {
            try (Lease lease = semaphore.acquire(Duration.ofSeconds(30))) {
              maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
              Thread.yield();
              inside.decrementAndGet();
              assertThat(lease.isHeld()).isTrue();
            }
          }
        } catch (Throwable e) {
          failure.compareAndSet(null, e);
        }
      }, "tck-sem-contender-" + t));
    }
    threads.forEach(Thread::start);
    for (Thread t : threads) {
      t.join();
    }
    assertThat(failure.get()).isNull();
    assertThat(maxInside.get()).as("holders at the same time").isBetween(1, permits);
    assertThat(a.semaphore(name(), permits).describe().taken()).isZero();
  }

  @Test
  void aReleaseWakesAWaiterInAnotherClientPromptly() throws Exception {
    LockClient a = client();
    LockClient b = client();
    DistributedSemaphore inA = a.semaphore(name(), 2, LONG);
    Lease one = inA.acquire();
    Lease two = inA.acquire();
    CompletableFuture<Lease> waiting =
        b.semaphore(name(), 2).acquireAsync(Duration.ofSeconds(20)).toCompletableFuture();
    assertThat(waiting).isNotDone();
    assertThat(one.release()).isTrue();
    Lease next = get(waiting);
    assertThat(next.isHeld()).isTrue();
    assertThat(next.fencingToken()).isGreaterThan(two.fencingToken());
    next.release();
    two.release();
  }

  @Test
  void aPermitWhoseFixedLeaseRunsOutComesBack() throws Exception {
    LockClient a = client();
    LockClient b = client();
    // timed from before the grant: the lease cannot start earlier, and a stall after the grant would
    // otherwise be taken off the wait
    long start = System.nanoTime();
    Lease fixed = a.semaphore(name(), 1, LockOptions.fixed(SHORT_LEASE)).acquire();
    Lease next = b.semaphore(name(), 1).acquire(Duration.ofSeconds(10));
    long waited = System.nanoTime() - start;
    assertThat(waited).as("taken only after the lease ran out").isGreaterThan(SHORT_LEASE.toNanos() / 2);
    assertThat(next.fencingToken()).isGreaterThan(fixed.fencingToken());
    assertThat(eventually(Duration.ofSeconds(2), () -> fixed.state() == LeaseState.LOST)).isTrue();
    assertThat(fixed.release()).as("release of a lost permit reports the loss").isFalse();
    assertThat(next.isHeld()).isTrue();
    assertThat(b.semaphore(name(), 1).describe().taken()).as("the new holder's permit stays").isEqualTo(1);
    next.release();
  }

  @Test
  void watchedPermitsOutliveSeveralLeaseTimes() throws Exception {
    LockClient a = client();
    LockClient b = client();
    DistributedSemaphore watched = a.semaphore(name(), 2, LockOptions.watched(WATCHED_LEASE));
    Lease one = watched.acquire();
    Lease two = watched.acquire();
    // the contender's bounded wait spans two lease times (real time: the backend's lease runs on it);
    // unrenewed, both permits would be back after one (renewed every third of the lease: some six times)
    assertThat(b.semaphore(name(), 2).tryAcquire(WATCHED_LEASE.multipliedBy(2))).isEmpty();
    assertThat(one.state()).isEqualTo(LeaseState.HELD);
    assertThat(two.state()).isEqualTo(LeaseState.HELD);
    assertThat(one.release()).isTrue();
    assertThat(two.release()).isTrue();
  }

  @Test
  void fencingTokensStrictlyIncreaseAcrossGrants() throws Exception {
    LockClient a = client();
    LockClient b = client();
    long previous = Long.MIN_VALUE;
    Lease kept = null;
    for (int i = 0; i < 20; i++) {
      Lease lease = (i % 2 == 0 ? a : b).semaphore(name(), 2, LONG).acquire(Duration.ofSeconds(10));
      assertThat(lease.fencingToken()).isGreaterThan(previous);
      previous = lease.fencingToken();
      // permits overlap: release the one taken before, keep this one
      if (kept != null) {
        kept.release();
      }
      kept = lease;
    }
    kept.release();
  }

  // ------------------------------------------------------------------ the permit count

  /**
   * Regression (issue 13 item 5): a force-unlock tells every evicted permit holder, in every client, so
   * that each permit's lease is {@code LOST} within {@link #evictionNoticeBound()} rather than at its next
   * renewal.
   */
  @Test
  void forceUnlockTellsEveryEvictedPermitHolderAtOnce() throws Exception {
    LockClient a = client();
    LockClient b = client();
    LockClient operator = client();
    LockOptions longLease = LockOptions.watched(evictionCaseLease());
    List<Lease> permits = List.of(a.semaphore(name(), 3, longLease).acquire(),
        a.semaphore(name(), 3, longLease).acquire(), b.semaphore(name(), 3, longLease).acquire());
    CountDownLatch lost = new CountDownLatch(permits.size());
    permits.forEach(p -> p.onLost(lost::countDown));
    assertThat(operator.semaphore(name(), 3).forceUnlock()).isTrue();
    assertThat(lost.await(evictionNoticeBound().toMillis(), TimeUnit.MILLISECONDS))
        .as("every permit LOST within %s of the force-unlock", evictionNoticeBound()).isTrue();
    for (Lease p : permits) {
      assertThat(p.state()).isEqualTo(LeaseState.LOST);
    }
    assertThat(operator.semaphore(name(), 3).describe().taken()).isZero();
  }

  @Test
  void describeReportsPermitsTakenAndWaiters() throws Exception {
    LockClient a = client();
    LockClient b = client();
    DistributedSemaphore semaphore = a.semaphore(name(), 3, LONG);
    SemaphoreInfo fresh = semaphore.describe();
    assertThat(fresh.name()).isEqualTo(name());
    assertThat(fresh.permits()).as("declared, none stored yet").isEqualTo(3);
    assertThat(fresh.taken()).isZero();
    assertThat(fresh.waiters()).isZero();
    assertThat(fresh.available()).isEqualTo(3);
    Lease one = semaphore.acquire();
    Lease two = semaphore.acquire();
    SemaphoreInfo info = b.semaphore(name(), 3).describe();
    assertThat(info.permits()).isEqualTo(3);
    assertThat(info.taken()).isEqualTo(2);
    assertThat(info.available()).isEqualTo(1);
    one.release();
    two.release();
    assertThat(semaphore.describe().taken()).isZero();
  }

  @Test
  void inspectSemaphoreNamesEveryHolderAndDeclaresNothing() throws Exception {
    LockClient a = client();
    LockClient b = client();
    LockClient operator = client();
    SemaphoreState fresh = operator.inspectSemaphore(name());
    assertThat(fresh.name()).isEqualTo(name());
    assertThat(fresh.storedPermits()).as("nothing stored before the first acquisition").isEmpty();
    assertThat(fresh.holders()).isEmpty();
    assertThat(fresh.isEmpty()).isTrue();
    Lease one = a.semaphore(name(), 3, LONG).acquire(); // stores 3
    Lease two = a.semaphore(name(), 3, LONG).acquire();
    Lease three = b.semaphore(name(), 3, LONG).acquire();
    SemaphoreState held = operator.inspectSemaphore(name());
    assertThat(held.storedPermits()).as("the stored count, not a declared one").hasValue(3);
    assertThat(held.taken()).isEqualTo(3);
    assertThat(held.holders()).extracting(PermitHolder::fencingToken).as("each permit's own token")
        .containsExactlyInAnyOrder(one.fencingToken(), two.fencingToken(), three.fencingToken());
    assertThat(held.holders()).filteredOn(h -> h.owner().startsWith(a.clientId() + ":")).as("a's two permits")
        .hasSize(2);
    assertThat(held.holders()).filteredOn(h -> h.owner().startsWith(b.clientId() + ":")).as("b's permit")
        .hasSize(1);
    assertThat(held.holders()).extracting(PermitHolder::owner).as("one owner per permit").doesNotHaveDuplicates();
    assertThat(held.holders()).allSatisfy(h -> assertThat(h.remainingTtl())
        .isPositive().isLessThanOrEqualTo(LONG.leaseTime()));
    assertThat(held.holders()).extracting(PermitHolder::remainingTtl).as("longest remaining lease first")
        .isSortedAccordingTo(java.util.Comparator.reverseOrder());
    for (Lease l : List.of(one, two, three)) {
      assertThat(l.release()).isTrue();
    }
    assertThat(operator.inspectSemaphore(name()).holders()).isEmpty();

    // a read of another name stores nothing there: the first acquisition still stores its own count
    String other = name() + "-other";
    assertThat(operator.inspectSemaphore(other).storedPermits()).isEmpty();
    Lease only = b.semaphore(other, 1, LONG).acquire();
    assertThat(operator.inspectSemaphore(other).storedPermits()).hasValue(1);
    assertThat(a.semaphore(other, 1, LONG).tryAcquire()).as("the count a declarer stored is in force").isEmpty();
    only.release();
  }

  @Test
  void theStoredCountWinsOverALaterDeclaredOne() throws Exception {
    LockClient a = client();
    LockClient b = client();
    DistributedSemaphore declaredTwo = a.semaphore(name(), 2, LONG);
    Lease first = declaredTwo.acquire(); // the first acquisition stores 2
    DistributedSemaphore declaredFive = b.semaphore(name(), 5, LONG);
    assertThat(declaredFive.declaredPermits()).isEqualTo(5);
    assertThat(declaredTwo.declaredPermits()).isEqualTo(2);
    assertThat(declaredFive.describe().permits()).as("stored count in force").isEqualTo(2);
    Lease second = declaredFive.tryAcquire().orElseThrow();
    assertThat(declaredFive.tryAcquire()).as("only the stored 2 permits exist").isEmpty();
    declaredFive.setPermits(5);
    assertThat(declaredTwo.describe().permits()).as("an operator change reaches every client").isEqualTo(5);
    Lease third = declaredTwo.tryAcquire().orElseThrow();
    for (Lease l : List.of(first, second, third)) {
      l.release();
    }
  }

  @Test
  void raisingThePermitsWakesAsManyWaiters() throws Exception {
    LockClient a = client();
    LockClient b = client();
    Lease held = a.semaphore(name(), 1, LONG).acquire();
    DistributedSemaphore inB = b.semaphore(name(), 1, LONG);
    CompletableFuture<Lease> w1 = inB.acquireAsync(Duration.ofSeconds(20)).toCompletableFuture();
    CompletableFuture<Lease> w2 = inB.acquireAsync(Duration.ofSeconds(20)).toCompletableFuture();
    CompletableFuture<Lease> w3 = inB.acquireAsync(Duration.ofSeconds(20)).toCompletableFuture();
    assertThat(List.of(w1, w2, w3)).allSatisfy(w -> assertThat(w).isNotDone());
    a.semaphore(name(), 1).setPermits(3);
    // two new permits: two of the three waiters get one promptly, the third keeps waiting
    assertThat(eventually(PROMPTLY, () -> List.of(w1, w2, w3).stream().filter(CompletableFuture::isDone)
        .count() == 2)).isTrue();
    SemaphoreInfo info = inB.describe();
    assertThat(info.permits()).isEqualTo(3);
    assertThat(info.taken()).isEqualTo(3);
    CompletableFuture<Lease> third = List.of(w1, w2, w3).stream().filter(w -> !w.isDone()).findFirst().orElseThrow();
    assertThat(held.release()).isTrue();
    get(third).release();
    for (CompletableFuture<Lease> w : List.of(w1, w2, w3)) {
      w.join().release();
    }
  }

  @Test
  void loweringThePermitsRevokesNothingAndNewcomersWaitUntilEnoughReturn() throws Exception {
    LockClient a = client();
    LockClient b = client();
    // WATCHED_LEASE: the three permits must survive every renewal until released (see WATCHED_LEASE)
    DistributedSemaphore inA = a.semaphore(name(), 3, LockOptions.watched(WATCHED_LEASE));
    List<Lease> held = new ArrayList<>(List.of(inA.acquire(), inA.acquire(), inA.acquire()));
    DistributedSemaphore inB = b.semaphore(name(), 3, LONG);
    inB.setPermits(1);
    SemaphoreInfo info = inB.describe();
    assertThat(info.permits()).isEqualTo(1);
    assertThat(info.taken()).as("may exceed the count after it was lowered").isEqualTo(3);
    assertThat(info.available()).isZero();
    // several renewals later (two lease times, renewed every third of it) every permit is still held,
    // and a newcomer still waits
    assertThat(inB.tryAcquire(WATCHED_LEASE.multipliedBy(2))).isEmpty();
    assertThat(held).allSatisfy(l -> assertThat(l.state()).isEqualTo(LeaseState.HELD));
    assertThat(held.remove(0).release()).isTrue();
    assertThat(inB.tryAcquire()).as("2 held, 1 permit").isEmpty();
    assertThat(held.remove(0).release()).isTrue();
    assertThat(inB.tryAcquire()).as("1 held, 1 permit").isEmpty();
    CompletableFuture<Lease> waiting = inB.acquireAsync(Duration.ofSeconds(20)).toCompletableFuture();
    assertThat(held.remove(0).release()).isTrue();
    Lease next = get(waiting);
    assertThat(inA.tryAcquire()).as("the one permit is taken").isEmpty();
    next.release();
  }

  // ------------------------------------------------------------------ input and lifecycle

  @Test
  void badInputIsRejectedWithDocumentedExceptions() {
    LockClient a = client();
    assertThatThrownBy(() -> a.semaphore(name(), 0)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> a.semaphore(name(), -2, LONG)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> a.semaphore(" ", 1)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> a.semaphore("", 1)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> a.semaphore(null, 1)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> a.semaphore(name(), 1, null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> a.semaphore("x".repeat(a.options().maxNameLength() + 1), 1))
        .isInstanceOf(IllegalArgumentException.class);
    DistributedSemaphore semaphore = a.semaphore(name(), 1);
    assertThatThrownBy(() -> semaphore.setPermits(0)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> semaphore.acquire(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(semaphore.describe().permits()).as("a refused change stored nothing").isEqualTo(1);
  }

  @Test
  void closingAClientReturnsItsPermitsAndWakesWaiters() throws Exception {
    LockClient a = client();
    LockClient b = newClient();
    DistributedSemaphore inB = b.semaphore(name(), 2, LONG);
    Lease one = inB.acquire();
    inB.acquire();
    CompletableFuture<Lease> waiting =
        a.semaphore(name(), 2).acquireAsync(Duration.ofSeconds(20)).toCompletableFuture();
    assertThat(waiting).isNotDone();
    b.close();
    Lease mine = get(waiting);
    assertThat(one.state()).isEqualTo(LeaseState.RELEASED);
    assertThat(a.semaphore(name(), 2).describe().taken()).as("only the new holder's permit").isEqualTo(1);
    assertThatThrownBy(() -> inB.tryAcquire()).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(inB::describe).isInstanceOf(IllegalStateException.class);
    mine.release();
  }
}
