package io.locksmith.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.ClientOptions;
import io.locksmith.Lease;
import io.locksmith.LeaseState;
import io.locksmith.LockClient;
import io.locksmith.LockOptions;
import io.locksmith.injvm.InJvmLockServer;
import io.locksmith.internal.LeaseLifecycleTest.ManualTicker;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The scheduling allowance (issue 23, item 22): a lease's validity ends {@code lease − drift − allowance}
 * after its request was sent, on the injected clock, so that the holder's timer and listeners may be late
 * by up to the allowance and still tell the holder before the server can grant the lock to someone else.
 */
@Timeout(30)
class SchedulingAllowanceTest {
  private static final Duration LEASE = Duration.ofSeconds(1);
  /** 1 s × 1 % + 2 ms. */
  private static final Duration DRIFT = Duration.ofMillis(12);

  @Test
  void remainingValiditySubtractsTheDefaultAllowance() {
    ManualTicker clock = new ManualTicker();
    InJvmLockServer server = new InJvmLockServer(clock);
    try (LockClient client = server.newClient(ClientOptions.builder().ticker(clock).build())) {
      Lease lease = client.lock("default", LockOptions.fixed(LEASE)).tryAcquire().orElseThrow();
      // 1000 ms − 12 ms drift − 50 ms default allowance
      assertThat(lease.remainingValidity()).isEqualTo(Duration.ofMillis(938));
      assertThat(ClientOptions.defaults().validityMarginFor(LEASE)).isEqualTo(Duration.ofMillis(62));
    }
  }

  @Test
  void remainingValiditySubtractsAGivenAllowance() {
    ManualTicker clock = new ManualTicker();
    InJvmLockServer server = new InJvmLockServer(clock);
    ClientOptions options = ClientOptions.builder().ticker(clock).schedulingAllowance(Duration.ofMillis(40)).build();
    try (LockClient client = server.newClient(options)) {
      Lease lease = client.lock("given", LockOptions.fixed(LEASE)).tryAcquire().orElseThrow();
      assertThat(lease.remainingValidity()).isEqualTo(LEASE.minus(DRIFT).minusMillis(40)); // 948 ms
      clock.advance(Duration.ofMillis(500));
      assertThat(lease.remainingValidity()).isEqualTo(Duration.ofMillis(448));
      clock.advance(Duration.ofMillis(448));
      assertThat(lease.state()).isEqualTo(LeaseState.LOST);
    }
  }

  @Test
  void aZeroAllowanceLeavesTheDriftAlone() {
    ManualTicker clock = new ManualTicker();
    InJvmLockServer server = new InJvmLockServer(clock);
    ClientOptions options = ClientOptions.builder().ticker(clock).schedulingAllowance(Duration.ZERO).build();
    try (LockClient client = server.newClient(options)) {
      Lease lease = client.lock("zero", LockOptions.fixed(LEASE)).tryAcquire().orElseThrow();
      assertThat(lease.remainingValidity()).isEqualTo(LEASE.minus(DRIFT));
    }
  }

  @Test
  void theLossTimerIsDueAtLeaseLessDriftLessAllowanceFromTheSendTimeAndOnLostRunsThere() throws Exception {
    ManualTicker clock = new ManualTicker();
    InJvmLockServer server = new InJvmLockServer(clock);
    ClientOptions options = ClientOptions.builder().ticker(clock).schedulingAllowance(Duration.ofMillis(40)).build();
    try (LockClient client = server.newClient(options)) {
      long sentAt = clock.nanoTime(); // the manual clock does not move while the request is in flight
      Lease lease = client.lock("timer", LockOptions.fixed(LEASE)).tryAcquire().orElseThrow();
      DefaultLease d = LeaseHandle.unwrap(lease);
      long expectedDue = sentAt + LEASE.minus(DRIFT).minusMillis(40).toNanos();
      assertThat(d.timerDueAt()).hasValue(expectedDue);
      CountDownLatch lost = new CountDownLatch(1);
      lease.onLost(lost::countDown);
      clock.advance(Duration.ofNanos(expectedDue - clock.nanoTime() - 1));
      d.expireIfDue(); // what the timer does when it fires: a nanosecond early, nothing
      assertThat(lease.state()).isEqualTo(LeaseState.HELD);
      clock.advance(Duration.ofNanos(1));
      d.expireIfDue(); // on time: lost, and onLost runs
      assertThat(lost.await(10, TimeUnit.SECONDS)).as("onLost ran").isTrue();
      assertThat(lease.state()).isEqualTo(LeaseState.LOST);
    }
  }

  @Test
  void aWatchedLeasesTimerNeverLetsValidityPassTheAllowance() throws Exception {
    ManualTicker clock = new ManualTicker();
    InJvmLockServer server = new InJvmLockServer(clock);
    ClientOptions options = ClientOptions.builder().ticker(clock).schedulingAllowance(Duration.ofMillis(40)).build();
    try (LockClient client = server.newClient(options)) {
      long sentAt = clock.nanoTime();
      Lease lease = client.lock("watched", LockOptions.watched(Duration.ofSeconds(3))).acquire();
      DefaultLease d = LeaseHandle.unwrap(lease);
      long validUntil = sentAt + Duration.ofSeconds(3).minusMillis(32).minusMillis(40).toNanos(); // drift 3 s: 32 ms
      assertThat(lease.remainingValidity()).isEqualTo(Duration.ofNanos(validUntil - clock.nanoTime()));
      assertThat(d.timerDueAt()).as("the next renewal comes first, a third of the lease on")
          .hasValue(sentAt + Duration.ofSeconds(1).toNanos());
      assertThat(d.claimForRenewal(Long.MAX_VALUE / 2)).isTrue(); // a renewal goes out now
      assertThat(d.timerDueAt()).as("while it is in flight, the timer is due at the end of validity")
          .hasValue(validUntil);
      d.onRenewalReply(clock.nanoTime(), true, null); // its answer: renewed
      assertThat(lease.release()).isTrue();
    }
  }

  @Test
  void buildRefusesANegativeOrNullAllowanceOrOneThatLeavesLessThanHalfTheDefaultLease() {
    assertThatThrownBy(() -> ClientOptions.builder().schedulingAllowance(Duration.ofMillis(-1)).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("schedulingAllowance");
    assertThatThrownBy(() -> ClientOptions.builder().schedulingAllowance(null).build())
        .isInstanceOf(NullPointerException.class).hasMessageContaining("schedulingAllowance");
    assertThatThrownBy(() -> ClientOptions.builder().schedulingAllowance(LockOptions.MAX_LEASE_TIME.plusMillis(1))
        .build()).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("schedulingAllowance");
    // default lease 30 s: drift 302 ms + 15 s leaves less than half
    assertThatThrownBy(() -> ClientOptions.builder().schedulingAllowance(Duration.ofSeconds(15)).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("schedulingAllowance")
        .hasMessageContaining("half of the default lease");
    assertThat(ClientOptions.builder().schedulingAllowance(Duration.ofSeconds(14)).build().schedulingAllowance())
        .isEqualTo(Duration.ofSeconds(14));
    assertThat(ClientOptions.defaults().schedulingAllowance()).isEqualTo(ClientOptions.DEFAULT_SCHEDULING_ALLOWANCE);
  }

  @Test
  void aLeaseNotLongerThanDriftPlusAllowanceIsRefusedWithTheReason() {
    InJvmLockServer server = new InJvmLockServer();
    ClientOptions options = ClientOptions.builder().schedulingAllowance(Duration.ofMillis(100)).build();
    try (LockClient client = server.newClient(options)) {
      // 101 ms: drift 3.01 ms + 100 ms is more than the lease
      assertThatThrownBy(() -> client.lock("short", LockOptions.fixed(Duration.ofMillis(101))))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("lease time PT0.101S is not longer than")
          .hasMessageContaining("schedulingAllowance PT0.1S");
      assertThatThrownBy(() -> client.semaphore("short", 2, LockOptions.fixed(Duration.ofMillis(101))))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("schedulingAllowance");
      assertThat(client.lock("long-enough", LockOptions.fixed(Duration.ofMillis(110))).tryAcquire()).isPresent();
    }
    try (LockClient client = server.newClient()) {
      // the shortest lease LockOptions accepts, 10 ms, is shorter than the default margin (2.1 ms + 50 ms)
      assertThatThrownBy(() -> client.lock("shortest", LockOptions.fixed(LockOptions.MIN_LEASE_TIME)))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("schedulingAllowance");
    }
  }
}
