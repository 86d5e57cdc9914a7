package io.locksmith.internal;

import static io.locksmith.testkit.LogCapture.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.BackendUnavailableException;
import io.locksmith.ClientOptions;
import io.locksmith.DegradationCounter;
import io.locksmith.DegradationPolicy;
import io.locksmith.DistributedLock;
import io.locksmith.FenceGuard;
import io.locksmith.Lease;
import io.locksmith.LeaseState;
import io.locksmith.LockClient;
import io.locksmith.LockOptions;
import io.locksmith.MultiLease;
import io.locksmith.MultiLock;
import io.locksmith.NoFencingTokenException;
import io.locksmith.StaleTokenException;
import io.locksmith.injvm.InJvmLockServer;
import io.locksmith.testkit.LogCapture;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;

/**
 * The degradation policy (issue 17 item 2) against the in-JVM server's outage switch
 * ({@link InJvmLockServer#setReachable}): efficiency locks fall back to a JVM-local lock and say so,
 * correctness locks fail closed, and the backend is used again as soon as it answers.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DegradationInJvmTest {
  private final InJvmLockServer server = new InJvmLockServer();
  private final List<LockClient> clients = new ArrayList<>();
  private final DegradationCounter counter = new DegradationCounter();
  private final LockOptions efficiency = LockOptions.builder()
      .degradation(DegradationPolicy.builder().listener(counter).build()).build();
  private String name;

  @BeforeEach
  void name(TestInfo info) {
    name = "degrade/" + info.getTestMethod().orElseThrow().getName() + "/" + System.nanoTime();
  }

  @AfterEach
  void close() {
    server.setReachable(true);
    clients.forEach(LockClient::close);
  }

  private LockClient client() {
    LockClient c = server.newClient(ClientOptions.builder().namespace("degrade").build());
    clients.add(c);
    return c;
  }

  @Test
  void anEfficiencyLockKeepsWorkingLocallyDuringAnOutageAndSaysSo() throws Exception {
    LockClient a = client();
    LockClient b = client();
    server.setReachable(false);
    try (LogCapture log = new LogCapture()) {
      Lease lease = a.lock(name, efficiency).acquire(Duration.ofSeconds(5));

      assertThat(lease.isDegraded()).as("lease says it is degraded").isTrue();
      assertThat(lease.state()).isEqualTo(LeaseState.HELD);
      assertThat(lease.fencingToken()).isEqualTo(Lease.NO_FENCING_TOKEN);
      assertThat(counter.degradedGrants()).as("metric").isEqualTo(1);
      assertThat(log.lines("WARN")).as("one WARN").isEqualTo(1);
      assertThat(log.text()).contains("lock '" + name + "'").contains("DEGRADED").contains("no fencing token");
      // the local lock still excludes within this JVM, across clients
      assertThat(b.lock(name, efficiency).tryAcquire(Duration.ofMillis(200))).isEmpty();
      // and a fence refuses the degraded lease
      FenceGuard fence = new FenceGuard();
      fence.admit("stock", 7);
      assertThatThrownBy(() -> fence.admit("stock", lease.fencingToken()))
          .isInstanceOf(NoFencingTokenException.class).isInstanceOf(StaleTokenException.class);
      assertThatThrownBy(() -> new FenceGuard().apply("fresh", lease.fencingToken(), () -> "ran"))
          .as("refused even where nothing was admitted yet").isInstanceOf(NoFencingTokenException.class);

      assertThat(lease.release()).isTrue();
      assertThat(lease.state()).isEqualTo(LeaseState.RELEASED);
      Lease next = b.lock(name, efficiency).tryAcquire().orElseThrow();
      assertThat(next.isDegraded()).isTrue();
      next.release();
      assertThat(counter.degradedGrants()).isEqualTo(2);
      assertThat(log.lines("WARN")).as("later degraded grants at DEBUG").isEqualTo(1);
    }
  }

  /**
   * {@link Lease#releaseAfter} on both kinds of degradable lease: a degraded one keeps its JVM-local lock
   * for the delay; one granted by the backend keeps the backend lock and the local lock alike.
   */
  @Test
  void aDegradableLeaseReleasedAfterADelayKeepsTheLockThatLong() throws Exception {
    LockClient a = client();
    LockClient b = client();
    // the "kept for the delay" checks must return within the delay: a few in-JVM calls, so 400 ms is
    // ample on a quiet machine. A stalled test thread makes that attempt void (checkedWithinDelay) and
    // the case runs again with twice the delay under a fresh name, up to 6.4 s: slow costs time, not a
    // false failure, and a lock freed early still fails at once
    String base = name;
    List<String> missed = new ArrayList<>();
    for (Duration delay = Duration.ofMillis(400); delay.toMillis() <= 6400; delay = delay.multipliedBy(2)) {
      name = base + "/" + delay.toMillis();
      try {
        releasedAfterADelay(a, b, delay);
        return;
      } catch (DelayMissed e) {
        missed.add(e.getMessage());
        System.out.printf("[window] %s: %s; again with twice the delay%n", name, e.getMessage());
      } finally {
        server.setReachable(true);
      }
    }
    throw new AssertionError("the test thread was too slow for every delay: " + missed);
  }

  private void releasedAfterADelay(LockClient a, LockClient b, Duration delay) throws Exception {
    server.setReachable(false);
    Lease degraded = a.lock(name, efficiency).acquire(Duration.ofSeconds(5));
    assertThat(degraded.isDegraded()).isTrue();
    long calledAt = System.nanoTime();
    assertThat(degraded.releaseAfter(delay)).isTrue();
    assertThat(degraded.state()).isEqualTo(LeaseState.RELEASED);
    assertThat(degraded.releaseAfter(delay)).as("released already").isFalse();
    Optional<Lease> duringDelay = b.lock(name, efficiency).tryAcquire();
    checkedWithinDelay(calledAt, delay, duringDelay);
    assertThat(duringDelay).as("the local lock is kept for the delay").isEmpty();
    Lease after = b.lock(name, efficiency).tryAcquire(Duration.ofSeconds(5)).orElseThrow();
    // real time is what is measured: the local lock is kept from calledAt for the delay (- 20 ms for
    // a timer that may fire up to a millisecond-rounding early)
    assertThat(Duration.ofNanos(System.nanoTime() - calledAt)).isGreaterThanOrEqualTo(delay.minusMillis(20));
    after.release();

    server.setReachable(true);
    Lease remote = a.lock(name, efficiency).acquire(Duration.ofSeconds(5));
    assertThat(remote.isDegraded()).isFalse();
    calledAt = System.nanoTime();
    assertThat(remote.releaseAfter(delay)).isTrue();
    remote.close(); // try-with-resources after releaseAfter: must not free the local lock early
    Optional<Lease> backendDuringDelay = b.lock(name, efficiency).tryAcquire();
    server.setReachable(false);
    Optional<Lease> localDuringDelay = b.lock(name, efficiency).tryAcquire();
    checkedWithinDelay(calledAt, delay, backendDuringDelay, localDuringDelay);
    assertThat(backendDuringDelay).as("the backend lock is kept for the delay").isEmpty();
    assertThat(localDuringDelay).as("and the local one: no degraded grant meanwhile").isEmpty();
    Lease local = b.lock(name, efficiency).tryAcquire(Duration.ofSeconds(5)).orElseThrow();
    // as above: kept from calledAt for the delay
    assertThat(Duration.ofNanos(System.nanoTime() - calledAt)).isGreaterThanOrEqualTo(delay.minusMillis(20));
    assertThat(local.isDegraded()).isTrue();
    local.release();
  }

  /**
   * Precondition of a "kept for the delay" check: it ran, and returned, before the delay that began at
   * {@code calledAt} was over. Otherwise a stalled test thread checked after the delay and would report
   * the lock as freed early: the attempt is void (what it took is given back) and runs again.
   */
  @SafeVarargs
  private static void checkedWithinDelay(long calledAt, Duration delay, Optional<Lease>... taken) {
    Duration took = Duration.ofNanos(System.nanoTime() - calledAt);
    if (took.compareTo(delay) >= 0) {
      for (Optional<Lease> l : taken) {
        l.ifPresent(Lease::release);
      }
      throw new DelayMissed("the check returned " + took.toMillis() + " ms after releaseAfter("
          + delay.toMillis() + " ms)");
    }
  }

  /** The test thread, not the code under test, was too slow for an attempt's delay. */
  private static final class DelayMissed extends RuntimeException {
    DelayMissed(String why) {
      super(why, null, false, false);
    }
  }

  @Test
  void aCorrectnessLockFailsClosedDuringTheSameOutage() throws Exception {
    LockClient a = client();
    server.setReachable(false);
    DistributedLock correctness = a.lock(name);
    assertThatThrownBy(correctness::tryAcquire).isInstanceOf(BackendUnavailableException.class);
    assertThatThrownBy(() -> correctness.acquire(Duration.ofMillis(300)))
        .isInstanceOf(BackendUnavailableException.class);
    assertThatThrownBy(correctness::tryLock).isInstanceOf(BackendUnavailableException.class);
    // other kinds ignore the policy: they fail closed too
    assertThatThrownBy(() -> a.fairLock(name, efficiency).tryAcquire())
        .isInstanceOf(BackendUnavailableException.class);
    assertThatThrownBy(() -> a.semaphore(name, 2, efficiency).tryAcquire())
        .isInstanceOf(BackendUnavailableException.class);
    assertThat(counter.degradedGrants()).isZero();
  }

  @Test
  void whenTheServerReturnsNewAcquisitionsUseItAgain() throws Exception {
    LockClient a = client();
    LockClient b = client();
    server.setReachable(false);
    Lease degraded = a.lock(name, efficiency).acquire(Duration.ofSeconds(5));
    assertThat(degraded.isDegraded()).isTrue();
    assertThat(a.lock(name, efficiency).currentThreadLease()).isEmpty();
    server.setReachable(true);
    try (LogCapture log = new LogCapture()) {
      // the degraded holder still excludes this JVM's backend acquisitions until it releases
      CompletableFuture<Lease> waiting = b.lock(name, efficiency).acquireAsync(Duration.ofSeconds(10))
          .toCompletableFuture();
      assertThat(b.inspect(name)).as("nobody on the backend yet").isEmpty();
      assertThat(waiting).isNotDone();
      degraded.release();
      Lease lease = waiting.get(10, TimeUnit.SECONDS);

      assertThat(lease.isDegraded()).isFalse();
      assertThat(lease.fencingToken()).isPositive();
      assertThat(b.inspect(name)).as("held on the backend").isPresent();
      assertThat(counter.restorations()).isEqualTo(1);
      assertThat(eventually(Duration.ofSeconds(5), () -> log.text().contains("granted by the backend again")))
          .isTrue();
      assertThat(new FenceGuard().admit("r", lease.fencingToken()).token()).isEqualTo(lease.fencingToken());
      assertThat(lease.release()).isTrue();
      assertThat(a.inspect(name)).isEmpty();
    }
  }

  @Test
  void aWaitingAcquisitionDegradesWhenAnOutageStartsDuringItsWait() throws Exception {
    LockClient holder = client();
    LockClient waiter = client();
    Lease held = holder.lock(name).acquire(); // a correctness holder elsewhere, on the backend
    CompletableFuture<Lease> waiting = waiter.lock(name, efficiency).acquireAsync(Duration.ofSeconds(30))
        .toCompletableFuture();
    assertThat(eventually(Duration.ofSeconds(5), () -> holder.inspect(name).map(i -> i.waiters() == 1)
        .orElse(false))).as("waiting on the backend").isTrue();
    long outage = System.nanoTime();
    server.setReachable(false);
    Lease lease = waiting.get(15, TimeUnit.SECONDS);
    long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - outage);
    assertThat(lease.isDegraded()).isTrue();
    assertThat(millis).as("degraded within a slice and a retry of the outage, not at the end of the wait")
        .isLessThan(10_000);
    lease.release();
    server.setReachable(true);
    held.release();
  }

  @Test
  void aGraceRidesOutShortOutagesBeforeDegrading() throws Exception {
    LockClient a = client();
    DegradationCounter graced = new DegradationCounter();
    LockOptions patient = LockOptions.builder().degradation(DegradationPolicy.builder()
        .grace(Duration.ofMillis(300)).listener(graced).build()).build();
    server.setReachable(false);
    long start = System.nanoTime();
    Lease lease = a.lock(name, patient).acquire(Duration.ofSeconds(10));
    long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    assertThat(lease.isDegraded()).isTrue();
    // real time is what is measured: the backend is asked for the whole grace (300 ms, its deadline
    // counted from after start); - 50 ms for the retry timer's rounding, the same allowance as before
    assertThat(millis).as("kept asking the backend for the grace").isGreaterThanOrEqualTo(250);
    lease.release();

    // an outage shorter than the grace is ridden out: the grant is the backend's
    CountDownLatch asking = new CountDownLatch(1);
    CompletableFuture<Lease> next = CompletableFuture.supplyAsync(() -> {
      asking.countDown();
      try {
        return a.lock(name, LockOptions.builder().degradation(DegradationPolicy.builder()
            .grace(Duration.ofSeconds(20)).build()).build()).acquire(Duration.ofSeconds(30));
      } catch (InterruptedException e) {
        throw new IllegalStateException(e);
      }
    });
    asking.await();
    Thread.sleep(500); // the outage's length (the fault injected), well inside the 20 s grace
    server.setReachable(true);
    Lease backend = next.get(20, TimeUnit.SECONDS);
    assertThat(backend.isDegraded()).isFalse();
    backend.release();
    assertThat(graced.degradedGrants()).isEqualTo(1);
  }

  @Test
  void theLockViewDegradesReentersAndUnlocks() throws Exception {
    LockClient a = client();
    server.setReachable(false);
    DistributedLock lock = a.lock(name, efficiency);
    lock.lock();
    lock.lock();
    assertThat(lock.getHoldCount()).isEqualTo(2);
    assertThat(lock.isHeldByCurrentThread()).isTrue();
    assertThat(a.lock(name, efficiency).currentThreadLease()).get().satisfies(l -> {
      assertThat(l.isDegraded()).isTrue();
      assertThat(l.holdCount()).isEqualTo(2);
    });
    AtomicReference<Boolean> other = new AtomicReference<>();
    Thread t = new Thread(() -> other.set(a.lock(name, efficiency).tryLock()));
    t.start();
    t.join();
    assertThat(other.get()).as("another thread is kept out").isFalse();
    lock.unlock();
    assertThat(lock.isHeldByCurrentThread()).isTrue();
    lock.unlock();
    assertThat(lock.isHeldByCurrentThread()).isFalse();
    assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);
    assertThat(lock.callLocked(Duration.ofSeconds(1), () -> lock.currentThreadLease().orElseThrow().isDegraded()))
        .isTrue();
  }

  @Test
  void aFixedDegradedLeaseEndsWithItsLeaseTime() throws Exception {
    LockClient a = client();
    LockClient b = client();
    LockOptions fixed = efficiency.mutate().fixedLease(Duration.ofMillis(300)).build();
    server.setReachable(false);
    Lease lease = a.lock(name, fixed).acquire(Duration.ofSeconds(1));
    CountDownLatch lost = new CountDownLatch(1);
    lease.onLost(lost::countDown);
    assertThat(lease.remainingValidity()).isPositive().isLessThanOrEqualTo(Duration.ofMillis(300));
    assertThat(lost.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(lease.state()).isEqualTo(LeaseState.LOST);
    assertThat(b.lock(name, fixed).tryAcquire()).as("local lock freed by the expiry").get()
        .satisfies(l -> assertThat(l.release()).isTrue());
    assertThat(lease.release()).isFalse();
  }

  @Test
  void closingTheClientEndsItsDegradedLeases() throws Exception {
    LockClient a = server.newClient(ClientOptions.builder().namespace("degrade").build());
    LockClient b = client();
    server.setReachable(false);
    Lease lease = a.lock(name, efficiency).acquire(Duration.ofSeconds(1));
    a.close();
    assertThat(lease.state()).isEqualTo(LeaseState.RELEASED);
    assertThat(b.lock(name, efficiency).tryAcquire()).isPresent().get().satisfies(Lease::release);
  }

  @Test
  void aMultiLockOfEfficiencyLocksSaysWhenAMemberIsDegraded() throws Exception {
    LockClient a = client();
    server.setReachable(false);
    MultiLease both = MultiLock.of(a, efficiency, List.of(name + "/a", name + "/b")).acquire(Duration.ofSeconds(1));
    assertThat(both.isDegraded()).isTrue();
    assertThat(both.fencingTokens()).containsValues(Lease.NO_FENCING_TOKEN);
    assertThat(both.release()).isTrue();
  }

  @Test
  void aDroppedDegradedLeaseFreesItsLocalLockAfterCollection() throws Exception {
    LockClient a = client();
    LockClient b = client();
    server.setReachable(false);
    try (LogCapture log = new LogCapture()) {
      dropALease(a);
      assertThat(eventually(Duration.ofSeconds(20), () -> {
        System.gc();
        return b.lock(name, efficiency).tryAcquire().map(Lease::release).orElse(false);
      })).as("local lock freed once the dropped lease was collected").isTrue();
      assertThat(log.text()).contains("became unreachable without being released");
    }
  }

  private void dropALease(LockClient a) throws InterruptedException {
    Optional<Lease> lease = a.lock(name, efficiency).tryAcquire(Duration.ofSeconds(1));
    assertThat(lease).get().satisfies(l -> assertThat(l.isDegraded()).isTrue());
  }

  @Test
  void badPoliciesAreRejected() {
    assertThatThrownBy(() -> DegradationPolicy.builder().grace(Duration.ofMillis(-1)).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("grace");
    assertThatThrownBy(() -> DegradationPolicy.builder().grace(Duration.ofHours(2)).build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> DegradationPolicy.builder().listener(null).build())
        .isInstanceOf(NullPointerException.class);
    assertThat(LockOptions.defaults().degradation()).as("fail closed by default").isEmpty();
    assertThat(efficiency.mutate().degradation(null).build()).isEqualTo(LockOptions.defaults());
  }
}
