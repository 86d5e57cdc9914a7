package io.locksmith.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.BackendUnavailableException;
import io.locksmith.ClientOptions;
import io.locksmith.Lease;
import io.locksmith.LeaseLostException;
import io.locksmith.LeaseState;
import io.locksmith.LockClient;
import io.locksmith.LockOptions;
import io.locksmith.Ticker;
import io.locksmith.injvm.InJvmLockServer;
import io.locksmith.testkit.LogCapture;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Lease validity, loss and recovery, driven by an injected clock and the in-JVM server's outage switch. */
@Timeout(30)
class LeaseLifecycleTest {

  /** A clock that moves only when told to. */
  static final class ManualTicker implements Ticker {
    private final AtomicLong now = new AtomicLong(1_000_000_000L);

    @Override
    public long nanoTime() {
      return now.get();
    }

    void advance(Duration d) {
      now.addAndGet(d.toNanos());
    }
  }

  /**
   * Issue 25 item 9: a fixed lease that ran out was logged as lost "without a successful renewal", as if a
   * renewal had been tried and failed; a fixed lease is never renewed, and the log says its time ran out.
   */
  @Test
  void aFixedLeaseThatRunsOutIsLoggedAsRunOutNotAsAFailedRenewal() throws Exception {
    ManualTicker clock = new ManualTicker();
    InJvmLockServer server = new InJvmLockServer(clock);
    try (LogCapture log = new LogCapture();
        LockClient client = server.newClient(ClientOptions.builder().ticker(clock).build())) {
      Lease fixed = client.lock("fixed-runs-out", LockOptions.fixed(Duration.ofSeconds(1))).tryAcquire()
          .orElseThrow();
      clock.advance(Duration.ofSeconds(1));
      assertThat(fixed.state()).isEqualTo(LeaseState.LOST);
      String told = "lease on lock 'fixed-runs-out' (token " + fixed.fencingToken() + ") is lost: ";
      // the WARN may come from the client's timer thread, which can see the expiry first: wait for it
      assertThat(LogCapture.eventually(Duration.ofSeconds(10), () -> log.text().contains(told))).isTrue();
      assertThat(log.text()).contains(told + "its fixed lease time ran out").doesNotContain("renewal");
    }
  }

  @Test
  void validityIsTheLeaseMinusElapsedMinusDriftAndAllowanceOnTheInjectedClock() {
    ManualTicker clock = new ManualTicker();
    InJvmLockServer server = new InJvmLockServer(clock);
    try (LockClient client = server.newClient(ClientOptions.builder().ticker(clock).build())) {
      Lease lease = client.lock("v", LockOptions.fixed(Duration.ofSeconds(1))).tryAcquire().orElseThrow();
      // drift = 1 s × 0.01 + 2 ms = 12 ms, scheduling allowance 50 ms (the default)
      assertThat(lease.remainingValidity()).isEqualTo(Duration.ofMillis(938));
      clock.advance(Duration.ofMillis(500));
      assertThat(lease.remainingValidity()).isEqualTo(Duration.ofMillis(438));
      assertThat(lease.state()).isEqualTo(LeaseState.HELD);
      clock.advance(Duration.ofMillis(438));
      assertThat(lease.state()).as("validity ends before the server's TTL does").isEqualTo(LeaseState.LOST);
      assertThat(lease.remainingValidity()).isZero();
      assertThatThrownBy(lease::checkHeld).isInstanceOf(LeaseLostException.class);
      assertThat(lease.release()).isFalse();
    }
  }

  @Test
  void validityCountsFromWhenTheRequestWasSentNotWhenTheReplyCame() {
    ManualTicker clock = new ManualTicker();
    // the server's clock is separate; ours moves 300 ms while the request is "in flight"
    InJvmLockServer server = new InJvmLockServer();
    Ticker slowNetwork = new Ticker() {
      private int reads;

      @Override
      public long nanoTime() {
        if (reads++ == 1) {
          clock.advance(Duration.ofMillis(300));
        }
        return clock.nanoTime();
      }
    };
    try (LockClient client = server.newClient(ClientOptions.builder().ticker(slowNetwork).build())) {
      Lease lease = client.lock("sent", LockOptions.fixed(Duration.ofSeconds(1))).tryAcquire().orElseThrow();
      assertThat(lease.remainingValidity()).isLessThanOrEqualTo(Duration.ofMillis(988 - 300));
    }
  }

  @Test
  void anOutageMakesAWatchedLeaseUncertainAndHealingMakesItHeldAgain() throws Exception {
    InJvmLockServer server = new InJvmLockServer();
    try (LockClient client = server.newClient()) {
      Lease lease = client.lock("outage", LockOptions.watched(Duration.ofSeconds(3))).acquire();
      BlockingQueue<LeaseState> states = new LinkedBlockingQueue<>();
      lease.addListener((l, from, to) -> states.add(to));
      server.setReachable(false);
      assertThat(states.poll(10, TimeUnit.SECONDS)).isEqualTo(LeaseState.UNCERTAIN);
      assertThat(lease.isHeld()).isFalse();
      assertThatThrownBy(() -> client.lock("other").tryAcquire()).isInstanceOf(BackendUnavailableException.class);
      server.setReachable(true);
      assertThat(states.poll(10, TimeUnit.SECONDS)).isEqualTo(LeaseState.HELD);
      assertThat(lease.release()).isTrue();
      assertThat(states.poll(10, TimeUnit.SECONDS)).isEqualTo(LeaseState.RELEASED);
    }
  }

  @Test
  void anOutageLongerThanTheValidityLosesTheLease() throws Exception {
    InJvmLockServer server = new InJvmLockServer();
    try (LockClient client = server.newClient()) {
      Lease lease = client.lock("long-outage", LockOptions.watched(Duration.ofMillis(300))).acquire();
      List<LeaseState> seen = new ArrayList<>();
      BlockingQueue<LeaseState> states = new LinkedBlockingQueue<>();
      lease.addListener((l, from, to) -> states.add(to));
      server.setReachable(false);
      for (LeaseState s; (s = states.poll(10, TimeUnit.SECONDS)) != null; ) {
        seen.add(s);
        if (s == LeaseState.LOST) {
          break;
        }
      }
      assertThat(seen).containsExactly(LeaseState.UNCERTAIN, LeaseState.LOST);
      server.setReachable(true);
      assertThat(lease.state()).as("LOST is final, even after healing").isEqualTo(LeaseState.LOST);
    }
  }

  @Test
  void reentryOnALostHoldThrowsAndUnlockClearsIt() {
    ManualTicker clock = new ManualTicker();
    InJvmLockServer server = new InJvmLockServer(clock);
    try (LockClient client = server.newClient(ClientOptions.builder().ticker(clock).build())) {
      Lock lock = client.lock("reentry", LockOptions.fixed(Duration.ofSeconds(1)));
      lock.lock();
      clock.advance(Duration.ofSeconds(2));
      assertThatThrownBy(lock::lock).isInstanceOf(LeaseLostException.class);
      assertThatThrownBy(lock::unlock).isInstanceOf(LeaseLostException.class);
      assertThatThrownBy(lock::unlock).as("the hold is gone after the failed unlock")
          .isInstanceOf(IllegalMonitorStateException.class);
      assertThat(lock.tryLock()).isTrue();
      lock.unlock();
    }
  }

  @Test
  void reentryAfterTheServerGaveTheLockToAnotherOwnerDoesNotGrantANewToken() {
    ManualTicker clock = new ManualTicker();
    InJvmLockServer server = new InJvmLockServer(clock);
    ClientOptions fastDrift = ClientOptions.builder().clockDrift(0.4, Duration.ZERO).build();
    try (LockClient a = server.newClient(fastDrift); LockClient b = server.newClient()) {
      Lock lock = a.lock("taken", LockOptions.fixed(Duration.ofSeconds(1)));
      lock.lock();
      clock.advance(Duration.ofMillis(1500)); // the server expires it; our real-time validity has not run out
      assertThat(b.lock("taken").tryAcquire()).isPresent();
      assertThatThrownBy(lock::lock).isInstanceOf(LeaseLostException.class);
    }
  }

  @Test
  void optionsAreValidatedWithClearMessages() {
    assertThatThrownBy(() -> ClientOptions.builder().maxNameLength(0).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxNameLength");
    assertThatThrownBy(() -> ClientOptions.builder().clockDrift(0.7, Duration.ZERO).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("clockDrift");
    assertThatThrownBy(() -> ClientOptions.builder().clockDrift(0.01, Duration.ofMillis(-1)).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("floor");
    assertThatThrownBy(() -> ClientOptions.builder().ticker(null).build()).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> LockOptions.fixed(Duration.ofMillis(5)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("10 ms");
    LockOptions o = LockOptions.watched(Duration.ofSeconds(9));
    assertThat(o.renewalInterval()).isEqualTo(Duration.ofSeconds(3));
    assertThat(o.mutate().fixedLease(Duration.ofSeconds(2)).build()).isEqualTo(LockOptions.fixed(Duration.ofSeconds(2)));
  }
}
