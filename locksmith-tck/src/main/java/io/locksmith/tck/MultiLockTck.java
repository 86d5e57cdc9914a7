package io.locksmith.tck;

import static io.locksmith.tck.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.AcquireTimeoutException;
import io.locksmith.Lease;
import io.locksmith.LeaseLostException;
import io.locksmith.LeaseState;
import io.locksmith.LockClient;
import io.locksmith.LockOptions;
import io.locksmith.MultiLease;
import io.locksmith.MultiLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The contract of {@link MultiLock} on a backend: several exclusive locks acquired as one. A backend's
 * test extends this class and implements {@link #newClient()}, as for {@link LockClientTck}. Contention
 * uses separate client objects (separate connections).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public abstract class MultiLockTck extends ContractSuite {
  /** For subclasses: a backend's suite. */
  protected MultiLockTck() {
    super("tck-multi/");
  }

  private List<String> names(String... suffixes) {
    List<String> out = new ArrayList<>();
    for (String s : suffixes) {
      out.add(name() + "/" + s);
    }
    return out;
  }

  /**
   * Two callers (in separate clients) lock the same three names, given in opposite orders, many times
   * over; a barrier makes each round start together, which is when naive lock-in-given-order code
   * deadlocks (each holding its first name and waiting for the other's). Every round must finish, and
   * the critical sections must never overlap.
   */
  @Test
  void twoCallersLockingTheSameNamesInOppositeOrdersNeverDeadlock() throws Exception {
    LockClient a = client();
    LockClient b = client();
    List<String> forward = names("x", "y", "z");
    List<String> backward = List.of(forward.get(2), forward.get(1), forward.get(0));
    int rounds = 25;
    CyclicBarrier together = new CyclicBarrier(2);
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger maxInside = new AtomicInteger();
    AtomicInteger done = new AtomicInteger();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    List<Thread> threads = new ArrayList<>();
    for (LockClient c : List.of(a, b)) {
      List<String> order = c == a ? forward : backward;
      threads.add(new Thread(() -> {
        try {
          MultiLock both = MultiLock.of(c, order);
          for (int i = 0; i < rounds; i++) {
            together.await(30, TimeUnit.SECONDS);
            try (MultiLease lease = both.acquire(Duration.ofSeconds(20))) {
              maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
              Thread.yield();
              inside.decrementAndGet();
            }
            done.incrementAndGet();
          }
        } catch (Throwable e) {
          failure.compareAndSet(null, e);
          together.reset(); // let the other thread out of the barrier
        }
      }));
    }
    threads.forEach(Thread::start);
    for (Thread t : threads) {
      t.join(50_000);
      assertThat(t.isAlive()).as("a caller is stuck (deadlock)").isFalse();
    }
    assertThat(failure.get()).isNull();
    assertThat(done.get()).isEqualTo(2 * rounds);
    assertThat(maxInside.get()).as("critical sections overlapped").isEqualTo(1);
  }

  @Test
  void theOrderIsAscendingWhateverOrderTheNamesAreGivenIn() {
    LockClient a = client();
    List<String> n = names("b", "c", "a");
    assertThat(a.multiLock(n.get(0), n.get(1), n.get(2)).names())
        .containsExactly(n.get(2), n.get(0), n.get(1));
  }

  /**
   * The middle name (in the global order) is held elsewhere: the multi-lock gets the first, waits for the
   * middle one until its wait runs out, and then must give the first back and never take the last.
   */
  @Test
  void aTimeoutLeavesNothingHeld() throws Exception {
    LockClient a = client();
    LockClient b = client();
    List<String> n = names("1", "2", "3");
    Lease middle = b.lock(n.get(1)).acquire();
    MultiLock all = MultiLock.of(a, n);

    long start = System.nanoTime();
    Optional<MultiLease> none = all.tryAcquire(Duration.ofMillis(300));
    long waitedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    assertThat(none).isEmpty();
    assertThat(waitedMillis).as("waited for the held name").isGreaterThanOrEqualTo(250);
    assertThatThrownBy(() -> all.acquire(Duration.ofMillis(100))).isInstanceOf(AcquireTimeoutException.class)
        .hasMessageContaining(n.get(1));
    assertThat(all.tryAcquire()).isEmpty();
    for (String name : List.of(n.get(0), n.get(2))) {
      assertThat(eventually(Duration.ofSeconds(5), () -> b.inspect(name).isEmpty()))
          .as("%s left held after an all-or-nothing failure", name).isTrue();
    }
    Lease first = b.lock(n.get(0)).tryAcquire().orElseThrow(() -> new AssertionError("first name still held"));
    first.release();
    middle.release();

    MultiLease now = all.acquire(Duration.ofSeconds(5));
    assertThat(now.isHeld()).isTrue();
    assertThat(now.release()).isTrue();
  }

  @Test
  void releaseFreesEveryNameAndIsIdempotent() throws Exception {
    LockClient a = client();
    LockClient b = client();
    List<String> n = names("p", "q", "r");
    MultiLease lease = MultiLock.of(a, n).acquire(Duration.ofSeconds(5));
    assertThat(lease.names()).containsExactlyElementsOf(n);
    assertThat(lease.state()).isEqualTo(LeaseState.HELD);
    for (String name : n) {
      assertThat(b.inspect(name)).as("%s held on the backend", name).isPresent();
    }
    assertThat(lease.release()).isTrue();
    assertThat(lease.state()).isEqualTo(LeaseState.RELEASED);
    assertThat(lease.release()).as("second release").isFalse();
    lease.close();
    for (Lease member : lease.leases()) {
      assertThat(member.state()).isEqualTo(LeaseState.RELEASED);
    }
    assertThat(MultiLock.of(b, n).tryAcquire()).as("another client gets all at once").isPresent()
        .get().satisfies(MultiLease::release);
  }

  @Test
  void everyMembersFencingTokenIsExposedAndGrowsOverGrants() throws Exception {
    LockClient a = client();
    List<String> n = names("s", "t");
    MultiLock both = MultiLock.of(a, n);
    MultiLease first = both.acquire(Duration.ofSeconds(5));
    Map<String, Long> tokens = first.fencingTokens();
    assertThat(tokens).containsOnlyKeys(n);
    for (String name : n) {
      assertThat(tokens.get(name)).isEqualTo(first.lease(name).fencingToken())
          .isEqualTo(first.fencingToken(name));
    }
    first.release();
    MultiLease second = both.acquire(Duration.ofSeconds(5));
    for (String name : n) {
      assertThat(second.fencingToken(name)).as("token of %s", name).isGreaterThan(tokens.get(name));
    }
    second.release();
    assertThatThrownBy(() -> second.lease("not-a-member")).isInstanceOf(IllegalArgumentException.class);
  }

  /** Watched members are renewed: a contender waiting two lease times gets none of them. */
  @Test
  void everyMemberIsRenewedWhileHeld() throws Exception {
    LockClient a = client();
    LockClient b = client();
    List<String> n = names("u", "v");
    // WATCHED_LEASE, not SHORT_LEASE: a member must survive every one of its renewals (see WATCHED_LEASE)
    MultiLease lease = MultiLock.of(a, LockOptions.watched(WATCHED_LEASE), n).acquire(Duration.ofSeconds(5));
    // two lease times of real time (the backend's leases run on it): unrenewed, every member would be free
    // after one; renewed every third of the lease, each was renewed some six times in a row
    assertThat(MultiLock.of(b, n).tryAcquire(WATCHED_LEASE.multipliedBy(2))).isEmpty();
    assertThat(b.lock(n.get(1)).tryAcquire(SHORT_LEASE)).isEmpty();
    assertThat(lease.state()).isEqualTo(LeaseState.HELD);
    assertThat(lease.remainingValidity()).isPositive();
    assertThat(lease.release()).isTrue();
  }

  @Test
  void aLostMemberMakesTheMultiLeaseSaySo() throws Exception {
    LockClient a = client();
    LockClient b = client();
    List<String> n = names("k", "l", "m");
    // the members not force-unlocked must stay held until the loss is told, so not SHORT_LEASE
    MultiLease lease = MultiLock.of(a, LockOptions.watched(WATCHED_LEASE), n).acquire(Duration.ofSeconds(5));
    CountDownLatch lost = new CountDownLatch(1);
    AtomicInteger fired = new AtomicInteger();
    lease.onLost(() -> {
      fired.incrementAndGet();
      lost.countDown();
    });
    assertThat(b.forceUnlock(n.get(1))).isTrue();
    assertThat(lost.await(10, TimeUnit.SECONDS)).as("onLost fired").isTrue();
    assertThat(lease.state()).isEqualTo(LeaseState.LOST);
    assertThat(lease.isHeld()).isFalse();
    assertThatThrownBy(lease::checkHeld).isInstanceOf(LeaseLostException.class).hasMessageContaining(n.get(1));
    assertThat(lease.release()).as("release reports the loss").isFalse();
    for (String name : List.of(n.get(0), n.get(2))) {
      assertThat(eventually(Duration.ofSeconds(5), () -> b.inspect(name).isEmpty()))
          .as("%s released with the others", name).isTrue();
    }
    assertThat(fired.get()).isEqualTo(1);
  }

  @Test
  void anInterruptedWaitLeavesNothingHeld() throws Exception {
    LockClient a = client();
    LockClient b = client();
    List<String> n = names("i", "j");
    Lease second = b.lock(n.get(1)).acquire();
    AtomicReference<Throwable> outcome = new AtomicReference<>();
    Thread waiter = new Thread(() -> {
      try {
        MultiLock.of(a, n).acquire(Duration.ofSeconds(30));
        outcome.set(new AssertionError("granted while a member is held elsewhere"));
      } catch (Throwable e) {
        outcome.set(e);
      }
    });
    waiter.start();
    assertThat(eventually(Duration.ofSeconds(10), () -> b.inspect(n.get(0)).isPresent()
        && (waiter.getState() == Thread.State.WAITING || waiter.getState() == Thread.State.TIMED_WAITING)))
        .as("first name taken, waiting for the second").isTrue();
    waiter.interrupt();
    waiter.join(10_000);
    assertThat(outcome.get()).isInstanceOf(InterruptedException.class);
    assertThat(eventually(Duration.ofSeconds(5), () -> b.inspect(n.get(0)).isEmpty()))
        .as("first name given back").isTrue();
    second.release();
  }

  @Test
  void badInputIsRejected() {
    LockClient a = client();
    assertThatThrownBy(() -> MultiLock.of(a, List.of())).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> a.multiLock(name(), name())).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("twice");
    assertThatThrownBy(() -> a.multiLock(name(), " ")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> a.multiLock(name(), null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> a.multiLock(name()).acquire(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
