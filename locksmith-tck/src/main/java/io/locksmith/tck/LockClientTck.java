package io.locksmith.tck;

import static io.locksmith.tck.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.AcquireTimeoutException;
import io.locksmith.ClientOptions;
import io.locksmith.DistributedLock;
import io.locksmith.FencingGuarantee;
import io.locksmith.Lease;
import io.locksmith.LeaseLostException;
import io.locksmith.LeaseState;
import io.locksmith.LockClient;
import io.locksmith.LockOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The contract every Locksmith backend honours. A backend's test extends this class and implements
 * {@link #newClient()}; every case then runs against real instances of that backend.
 *
 * <pre>{@code
 * class RedisLockTckTest extends LockClientTck {
 *   @RegisterExtension static final RedisServerExtension REDIS = new RedisServerExtension();
 *   @Override protected LockClient newClient() { return RedisLockClient.create(REDIS.server().uri()); }
 * }
 * }</pre>
 *
 * <p>Contention cases use two client objects, i.e. separate connections, not only threads of one
 * client. Nothing here sleeps to synchronise: waits are the behaviour under test (a contender's
 * bounded {@code tryAcquire}), latches, or polls with a deadline.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public abstract class LockClientTck extends ContractSuite {
  /** For subclasses: a backend's suite. */
  protected LockClientTck() {
    super("tck/");
  }

  /**
   * The lock under test. Backends override nothing here; the TCK variants for other lock kinds (fair
   * lock, the write side of a read-write lock) override it so that the whole contract runs on them.
   *
   * @param client the client
   * @param name the lock name
   * @param options the lease policy
   * @return the lock of the kind under test
   */
  protected DistributedLock lockUnderTest(LockClient client, String name, LockOptions options) {
    return client.lock(name, options);
  }

  /**
   * Whether the backend's fencing tokens are consecutive per lock name (a fresh grant takes the last
   * token + 1), which lets {@link #aPreInterruptedThreadThrowsAndSendsNothing} prove that no token was
   * used up; elsewhere the suite only requires tokens to increase. By default, true for {@link
   * FencingGuarantee#STRICT} backends. A backend whose strict tokens come from a counter shared by every
   * name (ZooKeeper's zxid, a database sequence) overrides this to return false.
   *
   * @param client a client of the backend under test
   * @return whether tokens are consecutive per name
   */
  protected boolean consecutiveTokens(LockClient client) {
    return client.capabilities().fencing() == FencingGuarantee.STRICT;
  }

  /** @return {@link #lockUnderTest} with the client's default lease policy */
  protected final DistributedLock lock(LockClient client, String name) {
    return lockUnderTest(client, name, client.options().defaultLockOptions());
  }

  /** @return {@link #lockUnderTest} */
  protected final DistributedLock lock(LockClient client, String name, LockOptions options) {
    return lockUnderTest(client, name, options);
  }

  // ------------------------------------------------------------------ exclusion

  @Test
  void mutualExclusionAcrossTwoClientsKeepsACounterExact() throws Exception {
    LockClient a = client();
    LockClient b = client();
    int threadsPerClient = 4;
    int rounds = 40;
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger maxInside = new AtomicInteger();
    int[] counter = new int[1];
    List<Thread> threads = new ArrayList<>();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    for (int t = 0; t < threadsPerClient * 2; t++) {
      LockClient c = t % 2 == 0 ? a : b;
      boolean leaseView = t % 4 < 2;
      threads.add(new Thread(() -> {
        try {
          DistributedLock lock = lock(c, name());
          for (int i = 0; i < rounds; i++) {
            Lease lease = null;
            if (leaseView) {
              lease = lock.acquire(Duration.ofSeconds(30));
            } else {
              lock.lock();
            }
            try {
              maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
              int read = counter[0];
              Thread.yield(); // widen the read-modify-write window
              counter[0] = read + 1;
              inside.decrementAndGet();
            } finally {
              if (leaseView) {
                lease.release();
              } else {
                lock.unlock();
              }
            }
          }
        } catch (Throwable e) {
          failure.compareAndSet(null, e);
        }
      }, "tck-contender-" + t));
    }
    threads.forEach(Thread::start);
    for (Thread t : threads) {
      t.join();
    }
    assertThat(failure.get()).isNull();
    assertThat(maxInside.get()).as("holders at the same time").isEqualTo(1);
    synchronized (counter) {
      assertThat(counter[0]).as("lost updates").isEqualTo(threadsPerClient * 2 * rounds);
    }
  }

  @Test
  void tryAcquireWithoutWaitFailsOnAHeldLock() {
    LockClient a = client();
    LockClient b = client();
    try (Lease held = lock(a, name()).tryAcquire().orElseThrow()) {
      assertThat(held.isHeld()).isTrue();
      assertThat(lock(b, name()).tryAcquire()).isEmpty();
      assertThat(lock(b, name()).tryLock()).isFalse();
      assertThat(lock(b, name()).isHeldByCurrentThread()).isFalse();
    }
    assertThat(lock(b, name()).tryAcquire()).isPresent();
  }

  @Test
  void tryAcquireHonoursItsWait() throws Exception {
    LockClient a = client();
    LockClient b = client();
    Lease held = lock(a, name()).acquire();
    // the wait is real time and is what is measured; any length shows it, 200 ms keeps the case short
    Duration wait = Duration.ofMillis(200);
    long start = System.nanoTime();
    Optional<Lease> none = lock(b, name()).tryAcquire(wait);
    long elapsed = System.nanoTime() - start;
    assertThat(none).isEmpty();
    assertThat(elapsed).as("not given up before its wait").isGreaterThanOrEqualTo(wait.toNanos());
    // wait 0.2 s + allowance 3 s for a last attempt's round trip on a loaded machine: bounded, not endless
    assertThat(elapsed).isLessThan(wait.plusSeconds(3).toNanos());
    assertThatThrownBy(() -> lock(b, name()).acquire(wait))
        .isInstanceOf(AcquireTimeoutException.class)
        .hasMessageContaining(name());
    assertThat(lock(b, name()).tryLock(50, TimeUnit.MILLISECONDS)).isFalse();
    assertThat(held.release()).isTrue();
  }

  // ------------------------------------------------------------------ re-entrancy and ownership

  @Test
  void lockViewIsReentrantWithTheSameToken() {
    LockClient a = client();
    LockClient b = client();
    DistributedLock lock = lock(a, name());
    lock.lock();
    long token = lock.currentThreadLease().orElseThrow().fencingToken();
    assertThat(lock.tryLock()).isTrue();
    lock.lock();
    assertThat(lock.getHoldCount()).isEqualTo(3);
    assertThat(lock.currentThreadLease().orElseThrow().fencingToken()).isEqualTo(token);
    assertThat(lock.currentThreadLease().orElseThrow().holdCount()).isEqualTo(3);
    lock.unlock();
    lock.unlock();
    assertThat(lock.getHoldCount()).isEqualTo(1);
    assertThat(lock(b, name()).tryAcquire()).as("still held after inner unlocks").isEmpty();
    lock.unlock();
    assertThat(lock.isHeldByCurrentThread()).isFalse();
    assertThat(lock.getHoldCount()).isZero();
    assertThat(lock(b, name()).tryAcquire()).as("free after the last unlock").isPresent();
  }

  @Test
  void unlockByANonOwnerThrowsIllegalMonitorState() throws Exception {
    LockClient a = client();
    DistributedLock lock = lock(a, name());
    assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);
    lock.lock();
    AtomicReference<Throwable> fromOther = new AtomicReference<>();
    Thread other = new Thread(() -> {
      try {
        lock(a, name()).unlock();
      } catch (Throwable e) {
        fromOther.set(e);
      }
    });
    other.start();
    other.join();
    assertThat(fromOther.get()).isInstanceOf(IllegalMonitorStateException.class);
    assertThat(lock.isHeldByCurrentThread()).isTrue();
    lock.unlock();
  }

  @Test
  void aLeaseCanBeReleasedFromAnotherThread() throws Exception {
    LockClient a = client();
    LockClient b = client();
    Lease lease = lock(a, name()).acquire();
    CompletableFuture<Boolean> released = CompletableFuture.supplyAsync(lease::release,
        r -> new Thread(r, "tck-other-thread").start());
    assertThat(released.get(10, TimeUnit.SECONDS)).isTrue();
    assertThat(lease.state()).isEqualTo(LeaseState.RELEASED);
    assertThat(lock(b, name()).tryAcquire()).isPresent();
  }

  @Test
  void leaseViewAcquisitionsAreSeparateOwners() {
    LockClient a = client();
    DistributedLock lock = lock(a, name());
    try (Lease first = lock.tryAcquire().orElseThrow()) {
      assertThat(lock.tryAcquire()).as("a second lease-view acquisition is another owner").isEmpty();
      assertThat(first.holdCount()).isEqualTo(1);
    }
  }

  @Test
  void releasingTwiceIsANoOp() {
    LockClient a = client();
    Lease lease = lock(a, name()).tryAcquire().orElseThrow();
    assertThat(lease.release()).isTrue();
    assertThat(lease.release()).isFalse();
    lease.close();
    assertThat(lease.state()).isEqualTo(LeaseState.RELEASED);
    assertThat(lease.remainingValidity()).isEqualTo(Duration.ZERO);
    assertThatThrownBy(lease::checkHeld).isInstanceOf(LeaseLostException.class);
  }

  @Test
  void aLeaseDescribesItself() {
    LockClient a = client();
    Duration leaseTime = Duration.ofSeconds(20);
    try (Lease lease = lock(a, name(), LockOptions.fixed(leaseTime)).tryAcquire().orElseThrow()) {
      assertThat(lease.lockName()).isEqualTo(name());
      assertThat(lease.state()).isEqualTo(LeaseState.HELD);
      assertThat(lease.holdCount()).isEqualTo(1);
      assertThat(lease.remainingValidity()).isPositive().isLessThan(leaseTime);
      assertThat(lease.checkHeld()).isSameAs(lease);
      assertThat(lock(a, name()).inspect()).hasValueSatisfying(info -> {
        assertThat(info.fencingToken()).isEqualTo(lease.fencingToken());
        assertThat(info.holdCount()).isEqualTo(1);
        assertThat(info.remainingTtl()).isPositive().isLessThanOrEqualTo(leaseTime);
      });
    }
    assertThat(lock(a, name()).inspect()).isEmpty();
  }

  // ------------------------------------------------------------------ leases in time

  @Test
  void aFixedLeaseExpiresAndFreesTheLockForAnotherClient() throws Exception {
    LockClient a = client();
    LockClient b = client();
    // timed from before the grant: the lease cannot start earlier, and a stall after the grant would
    // otherwise be taken off the wait
    long start = System.nanoTime();
    Lease fixed = lock(a, name(), LockOptions.fixed(SHORT_LEASE)).acquire();
    Lease next = lock(b, name()).acquire(Duration.ofSeconds(10));
    long waited = System.nanoTime() - start;
    assertThat(waited).as("taken over only after the lease ran out")
        .isGreaterThan(SHORT_LEASE.toNanos() / 2);
    assertThat(next.fencingToken()).isGreaterThan(fixed.fencingToken());
    assertThat(fixed.state()).isEqualTo(LeaseState.LOST);
    assertThat(fixed.release()).as("release of a lost lease reports the loss").isFalse();
    assertThat(next.isHeld()).as("releasing the lost lease did not touch the new holder's lock").isTrue();
    next.release();
  }

  @Test
  void aWatchedLeaseOutlivesSeveralLeaseTimes() throws Exception {
    LockClient a = client();
    LockClient b = client();
    Lease watched = lock(a, name(), LockOptions.watched(WATCHED_LEASE)).acquire();
    // the contender's bounded wait spans two lease times (real time: the backend's lease runs on it).
    // Unrenewed, the lock would be free after one; held through two, it was renewed again and again (a
    // renewal every third of the lease: some six in a row, each before the previous one ran out)
    assertThat(lock(b, name()).tryAcquire(WATCHED_LEASE.multipliedBy(2))).isEmpty();
    assertThat(watched.state()).isEqualTo(LeaseState.HELD);
    assertThat(watched.remainingValidity()).isPositive();
    assertThat(watched.release()).isTrue();
  }

  /**
   * Whether a lock left taken by {@link Lease#releaseAfter} stays taken once its client is closed: true
   * where leases run out on the server. A backend whose holds end with the client's session or
   * connection (ZooKeeper, a database session lock) overrides this to return false; the TCK then checks
   * the delay with the client open.
   *
   * @return true unless the backend documents otherwise
   */
  protected boolean keepsLocksReleasedAfterADelayPastClose() {
    return true;
  }

  /**
   * {@link Lease#releaseAfter}: the holder is done at once (RELEASED), the lock stays taken for the
   * delay, also after the holder's client is closed where the backend keeps it, and a waiter of another
   * client is granted it when the delay is over, not before.
   */
  @Test
  void aLeaseReleasedAfterADelayKeepsTheLockTakenThatLong() throws Exception {
    LockClient other = client();
    boolean keeps = keepsLocksReleasedAfterADelayPastClose();
    // the "taken for the delay" check must run within the delay, after a round trip and (keeps) the
    // holder's close(): 500 ms is ample on a quiet machine; a slower check retries with a longer delay
    withGrowingWindow(Duration.ofMillis(500), 4, delay -> {
      String name = name();
      LockClient holder = client();
      Lease lease = lock(holder, name).acquire(Duration.ofSeconds(10));
      long calledAt = System.nanoTime();
      assertThat(lease.releaseAfter(delay)).as("held up to the call").isTrue();
      assertThat(lease.state()).isEqualTo(LeaseState.RELEASED);
      assertThat(lease.releaseAfter(delay)).as("a second call: released already").isFalse();
      assertThat(lease.release()).as("release after it: released already").isFalse();
      if (keeps) {
        holder.close();
      }
      Optional<Lease> early = lock(other, name).tryAcquire();
      long checkedAt = System.nanoTime();
      if (checkedAt - calledAt >= delay.toNanos()) {
        early.ifPresent(Lease::release);
        throw windowMissed("the check returned " + Duration.ofNanos(checkedAt - calledAt).toMillis()
            + " ms after releaseAfter");
      }
      assertThat(early).as(keeps ? "taken for the delay, its client closed" : "taken for the delay").isEmpty();
      Optional<Lease> next = lock(other, name).tryAcquire(Duration.ofSeconds(15));
      long grantedAt = System.nanoTime();
      assertThat(next).as("granted once the delay is over").isPresent();
      // real time is what is measured: the backend counts the delay from when it applied the call, after
      // calledAt, so the grant comes >= delay after calledAt; - 20 ms for backend clocks that tick in ms
      assertThat(Duration.ofNanos(grantedAt - calledAt)).as("not before the delay")
          .isGreaterThanOrEqualTo(delay.minusMillis(20));
      assertThat(next.get().fencingToken()).isGreaterThan(lease.fencingToken());
      assertThatThrownBy(() -> next.get().releaseAfter(LockOptions.MAX_LEASE_TIME.plusMillis(1)))
          .isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> next.get().releaseAfter(null)).isInstanceOf(NullPointerException.class);
      assertThat(next.get().isHeld()).as("bad input changed nothing").isTrue();
      assertThat(next.get().releaseAfter(Duration.ZERO)).as("no delay: released now").isTrue();
      assertThat(lock(other, name).tryAcquire()).as("free at once").isPresent();
    });
  }

  /**
   * Whether {@link LockClient#forceUnlock(String)} reaches a lock that another client holds. A backend
   * that documents that it cannot (a lock held by another database session, e.g. a row lock on MariaDB)
   * overrides this to return false; the TCK then checks the documented behaviour instead: the call
   * returns false and the holder keeps its lock.
   *
   * @return true unless the backend documents otherwise
   */
  protected boolean forceUnlockReachesOtherClients() {
    return true;
  }

  @Test
  void forceUnlockMakesTheHolderLoseItsLeaseAndItsListenerFire() throws Exception {
    LockClient a = client();
    LockClient b = client();
    Lease lease = lock(a, name(), LockOptions.watched(WATCHED_LEASE)).acquire();
    if (!forceUnlockReachesOtherClients()) {
      assertThat(lock(b, name()).forceUnlock()).as("documented: not from another client").isFalse();
      assertThat(lock(b, name()).tryAcquire()).as("the holder keeps its lock").isEmpty();
      assertThat(lease.isHeld()).isTrue();
      assertThat(lock(a, name()).forceUnlock()).as("the holder's own client can").isTrue();
      assertThat(lock(b, name()).tryAcquire(Duration.ofSeconds(5))).isPresent();
      return;
    }
    CountDownLatch lost = new CountDownLatch(1);
    AtomicReference<String> listenerThread = new AtomicReference<>();
    List<LeaseState> seen = new ArrayList<>();
    lease.addListener((l, from, to) -> {
      synchronized (seen) {
        seen.add(to);
      }
    });
    lease.onLost(() -> {
      listenerThread.set(Thread.currentThread().getName());
      lost.countDown();
    });
    assertThat(lock(b, name()).forceUnlock()).isTrue();
    assertThat(lost.await(10, TimeUnit.SECONDS)).as("onLost fired").isTrue();
    assertThat(lease.state()).isEqualTo(LeaseState.LOST);
    assertThat(listenerThread.get()).startsWith("locksmith-events-");
    assertThat(eventually(Duration.ofSeconds(5), () -> {
      synchronized (seen) {
        return seen.contains(LeaseState.LOST);
      }
    })).isTrue();
    Lease taken = lock(b, name()).tryAcquire().orElseThrow();
    assertThat(lease.release()).isFalse();
    assertThat(taken.isHeld()).isTrue();
    assertThat(lock(b, name() + "/never-held").forceUnlock()).isFalse();
    taken.release();
  }

  /**
   * Regression (issue 13 item 5): a force-unlocked holder said {@code HELD} until its next renewal (3.2 s
   * with the default lease, 9 s for the fair lock) while another client held the lock. It is told now:
   * that lease, and no other lease of its client, becomes {@code LOST} within {@link
   * #evictionNoticeBound()}.
   */
  @Test
  void forceUnlockTellsTheEvictedHolderAtOnce() throws Exception {
    LockClient a = client();
    LockClient b = client();
    LockOptions longLease = LockOptions.watched(evictionCaseLease());
    Lease evicted = lock(a, name(), longLease).acquire();
    Lease bystander = lock(a, name() + "/bystander", longLease).acquire();
    CountDownLatch lost = new CountDownLatch(1);
    evicted.onLost(lost::countDown);
    // a backend whose force-unlock cannot reach another client's hold (documented) evicts through the
    // holder's own client, which must tell its lease just as promptly
    LockClient operator = forceUnlockReachesOtherClients() ? b : a;
    assertThat(lock(operator, name()).forceUnlock()).isTrue();
    assertThat(lost.await(evictionNoticeBound().toMillis(), TimeUnit.MILLISECONDS))
        .as("LOST within %s of the force-unlock, not at its renewal %s s after the grant", evictionNoticeBound(),
            evictionCaseLease().dividedBy(3).toMillis() / 1000.0)
        .isTrue();
    assertThat(evicted.state()).isEqualTo(LeaseState.LOST);
    assertThat(bystander.state()).as("another lock of the same client").isEqualTo(LeaseState.HELD);
    Lease next = lock(b, name()).tryAcquire().orElseThrow();
    assertThat(evicted.release()).isFalse();
    assertThat(next.isHeld()).isTrue();
    next.release();
    assertThat(bystander.release()).isTrue();
  }

  @Test
  void fencingTokensStrictlyIncreaseOverSuccessiveGrants() throws Exception {
    LockClient a = client();
    LockClient b = client();
    long previous = Long.MIN_VALUE;
    for (int i = 0; i < 30; i++) {
      LockClient c = i % 2 == 0 ? a : b;
      Lease lease = lock(c, name()).acquire(Duration.ofSeconds(10));
      assertThat(lease.fencingToken()).isGreaterThan(previous);
      previous = lease.fencingToken();
      lease.release();
    }
  }

  // ------------------------------------------------------------------ waiting

  @Test
  void aWaiterInAnotherClientIsWokenByTheRelease() throws Exception {
    LockClient a = client();
    LockClient b = client();
    Lease held = lock(a, name(), LockOptions.watched(Duration.ofSeconds(30))).acquire();
    CompletableFuture<Lease> waiting = lock(b, name()).acquireAsync(Duration.ofSeconds(20)).toCompletableFuture();
    assertThat(waiting).isNotDone();
    held.release();
    // far less than the 30 s lease: the waiter was notified, not left to the lease running out
    Lease next = waiting.get(5, TimeUnit.SECONDS);
    assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
    next.release();
  }

  @Test
  void interruptWhileWaitingThrowsAndLeavesNothingBehind() throws Exception {
    LockClient a = client();
    LockClient b = client();
    LockClient c = client();
    Lease held = lock(a, name()).acquire();
    AtomicReference<Throwable> outcome = new AtomicReference<>();
    AtomicReference<Boolean> heldAfter = new AtomicReference<>();
    Thread waiter = new Thread(() -> {
      DistributedLock lock = lock(b, name());
      try {
        lock.lockInterruptibly();
        outcome.set(new AssertionError("lock granted while held elsewhere"));
      } catch (Throwable e) {
        outcome.set(e);
      }
      heldAfter.set(lock.isHeldByCurrentThread());
    });
    Thread leaseWaiter = new Thread(() -> {
      try {
        lock(b, name()).acquire();
      } catch (Throwable e) {
        outcome.compareAndSet(null, e);
      }
    });
    waiter.start();
    leaseWaiter.start();
    assertThat(eventually(Duration.ofSeconds(5), () -> waiter.getState() == Thread.State.WAITING
        && leaseWaiter.getState() == Thread.State.WAITING)).isTrue();
    waiter.interrupt();
    waiter.join(10_000);
    leaseWaiter.interrupt();
    leaseWaiter.join(10_000);
    assertThat(waiter.isAlive()).isFalse();
    assertThat(leaseWaiter.isAlive()).isFalse();
    assertThat(outcome.get()).isInstanceOf(InterruptedException.class);
    assertThat(heldAfter.get()).isFalse();
    held.release();
    // no hold leaked by the interrupted waiters: a third client gets the lock at once
    Lease third = lock(c, name()).acquire(Duration.ofSeconds(5));
    assertThat(third.isHeld()).isTrue();
    third.release();
    assertThat(eventually(Duration.ofSeconds(5),
        () -> lock(c, name()).inspect().isEmpty())).as("nothing left on the backend").isTrue();
  }

  /**
   * Regression (issue 12 item 12): an interrupted thread's {@code acquire} and {@code tryAcquire(wait)}
   * sent an attempt anyway, which could take the lock, give it back and use up a fencing token. Every
   * interruptible call now checks the interrupt first, as {@code lockInterruptibly} does: it throws
   * {@link InterruptedException}, clears the interrupt status and sends nothing.
   */
  @Test
  void aPreInterruptedThreadThrowsAndSendsNothing() throws Exception {
    LockClient a = client();
    DistributedLock lock = lock(a, name());
    Lease first = lock.tryAcquire().orElseThrow();
    first.release();
    Map<String, Callable<?>> calls = new LinkedHashMap<>();
    calls.put("acquire()", lock::acquire);
    calls.put("acquire(5 s)", () -> lock.acquire(Duration.ofSeconds(5)));
    calls.put("acquire(0)", () -> lock.acquire(Duration.ZERO));
    calls.put("tryAcquire(5 s)", () -> lock.tryAcquire(Duration.ofSeconds(5)));
    calls.put("tryAcquire(0)", () -> lock.tryAcquire(Duration.ZERO));
    calls.put("tryLock(5 s)", () -> lock.tryLock(5, TimeUnit.SECONDS));
    calls.put("lockInterruptibly()", () -> {
      lock.lockInterruptibly();
      return null;
    });
    CompletableFuture<List<String>> outcome = CompletableFuture.supplyAsync(() -> {
      List<String> wrong = new ArrayList<>();
      calls.forEach((what, call) -> {
        Thread.currentThread().interrupt();
        try {
          wrong.add(what + " returned " + call.call());
        } catch (InterruptedException expected) {
          if (Thread.currentThread().isInterrupted()) {
            wrong.add(what + " left the interrupt status set");
          }
        } catch (Exception e) {
          wrong.add(what + " threw " + e);
        } finally {
          Thread.interrupted();
        }
      });
      return wrong;
    }, command -> new Thread(command, "tck-interrupted").start());
    assertThat(outcome.get(20, TimeUnit.SECONDS)).as("calls that did not throw InterruptedException at once")
        .isEmpty();
    assertThat(lock.inspect()).as("nothing held").isEmpty();
    Lease next = lock.tryAcquire().orElseThrow();
    if (consecutiveTokens(a)) {
      assertThat(next.fencingToken()).as("no token used up by the interrupted calls")
          .isEqualTo(first.fencingToken() + 1);
    } else {
      assertThat(next.fencingToken()).isGreaterThan(first.fencingToken());
    }
    next.release();
  }

  // ------------------------------------------------------------------ async view

  @Test
  void theAsyncViewMatchesTheBlockingOne() throws Exception {
    LockClient a = client();
    LockClient b = client();
    Lease lease = lock(a, name()).acquireAsync(Duration.ZERO).toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertThat(lease.isHeld()).isTrue();
    Optional<Lease> none = lock(b, name()).tryAcquireAsync(Duration.ofMillis(100))
        .toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertThat(none).isEmpty();
    CompletableFuture<Lease> timeout = lock(b, name()).acquireAsync(Duration.ofMillis(100)).toCompletableFuture();
    assertThatThrownBy(() -> timeout.get(10, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(AcquireTimeoutException.class);
    CompletableFuture<Lease> cancelled = lock(b, name()).acquireAsync(Duration.ofSeconds(30)).toCompletableFuture();
    assertThat(cancelled.cancel(false)).isTrue();
    CompletableFuture<Lease> later = lock(b, name()).acquireAsync(Duration.ofSeconds(10)).toCompletableFuture();
    assertThat(later).isNotDone();
    lease.release();
    Lease next = later.get(10, TimeUnit.SECONDS);
    assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
    assertThatThrownBy(() -> cancelled.get(1, TimeUnit.SECONDS)).isNotInstanceOf(TimeoutException.class);
    next.release();
    assertThat(eventually(Duration.ofSeconds(5), () -> lock(b, name()).inspect().isEmpty()))
        .as("the cancelled acquisition left no hold behind").isTrue();
  }

  @Test
  void anAsyncCallerThatGivesUpLeavesNoPhantomHolder() throws Exception {
    LockClient a = client();
    LockClient b = client();
    LockClient c = client();
    Lease held = lock(a, name()).acquire();
    CompletableFuture<Lease> impatient = lock(b, name()).acquireAsync(Duration.ofSeconds(30))
        .toCompletableFuture().orTimeout(200, TimeUnit.MILLISECONDS);
    assertThatThrownBy(() -> impatient.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(TimeoutException.class);
    held.release();
    // had the abandoned acquisition been granted to nobody, its watched lease would block this for good
    Lease third = lock(c, name()).acquire(Duration.ofSeconds(10));
    assertThat(third.isHeld()).isTrue();
    third.release();
  }

  // ------------------------------------------------------------------ bad input

  @Test
  void badInputIsRejectedWithDocumentedExceptions() {
    LockClient a = client();
    int max = a.options().maxNameLength();
    assertThatThrownBy(() -> lock(a, null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> lock(a, "")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> lock(a, "   ")).isInstanceOf(IllegalArgumentException.class);
    for (String control : new String[] {"job\n1", "job\u0000", "job\u007f", "\tjob"}) {
      assertThatThrownBy(() -> lock(a, control)).as("control character in %s", control.codePoints().boxed().toList())
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("control");
    }
    assertThatThrownBy(() -> lock(a, "x".repeat(max + 1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(String.valueOf(max));
    assertThat(lock(a, "x".repeat(max)).name()).hasSize(max);
    assertThatThrownBy(() -> lock(a, name(), null)).isInstanceOf(NullPointerException.class);
    DistributedLock lock = lock(a, name());
    assertThatThrownBy(() -> lock.acquire(Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> lock.tryAcquire(Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> lock.acquireAsync(Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> lock.acquire(null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> lock.tryLock(-1, TimeUnit.MILLISECONDS)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> LockOptions.fixed(Duration.ofMillis(-5))).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> LockOptions.watched(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ClientOptions.builder().namespace("bad namespace").build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(lock::newCondition).isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> a.inspect(" ")).isInstanceOf(IllegalArgumentException.class);
  }

  /**
   * Regression (issue 12 item 11): names with an unpaired UTF-16 surrogate (no UTF-8 form) are refused;
   * Redis used to store "job-" + U+D800, "job-" + U+DBFF and "job-?" under one key. A character outside
   * the Basic Multilingual Plane is a valid name character and counts once toward the length limit.
   */
  @Test
  void namesWithUnpairedSurrogatesAreRejectedAndLengthCountsCodePoints() throws Exception {
    LockClient a = client();
    LockClient b = client();
    for (String bad : List.of(name() + "-\uD800", name() + "-\uDBFF", "\uDC00" + name())) {
      assertThatThrownBy(() -> lock(a, bad)).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("surrogate");
    }
    String grinning = "\uD83D\uDE00";
    try (Lease question = lock(a, name() + "-?").tryAcquire().orElseThrow();
        Lease emoji = lock(b, name() + "-" + grinning).tryAcquire().orElseThrow()) {
      assertThat(question.fencingToken()).isPositive();
      assertThat(emoji.lockName()).isEqualTo(name() + "-" + grinning);
    }
    int max = a.options().maxNameLength();
    try (Lease longest = lock(a, grinning.repeat(max)).tryAcquire().orElseThrow()) {
      assertThat(longest.lockName()).hasSize(2 * max);
    }
    assertThatThrownBy(() -> lock(a, grinning.repeat(max + 1))).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(String.valueOf(max));
  }

  @Test
  void aClosedClientRefusesWorkAndEndsItsWaiters() throws Exception {
    LockClient a = client();
    LockClient b = newClient();
    Lease held = lock(a, name()).acquire();
    CompletableFuture<Lease> waiting = lock(b, name()).acquireAsync(Duration.ofSeconds(30)).toCompletableFuture();
    b.close();
    assertThatThrownBy(() -> waiting.get(10, TimeUnit.SECONDS))
        .hasCauseInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> lock(b, name())).isInstanceOf(IllegalStateException.class);
    b.close(); // idempotent
    held.release();
  }
}
