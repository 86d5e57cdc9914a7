package io.locksmith.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.Lease;
import io.locksmith.LeaseState;
import io.locksmith.LockOptions;
import io.locksmith.testkit.RedisServer;
import io.locksmith.testkit.RedisServerExtension;
import io.locksmith.testkit.TcpProxy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A lease whose renewal is in flight when its validity ends is reported lost when its validity ends,
 * not when the renewal gives up a command timeout after it was sent (issue 12, item 15).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LossDuringRenewalTest {
  /** The lease is shorter than 1.5 × the command timeout: its renewal outlives its validity. */
  private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(3);
  private static final Duration LEASE = Duration.ofMillis(1500);
  /**
   * How late a listener may be told, on a loaded machine: timer and event-thread latency only. Half of the
   * regression's lateness (the renewal's timeout, about 2 s after the validity ended), so it still fails,
   * but a second of CPU starvation on a 2-core CI host does not.
   */
  private static final long MARGIN_MILLIS = 1000;

  @RegisterExtension
  static final RedisServerExtension REDIS = new RedisServerExtension();

  /**
   * Regression: the renewal (sent a third into the lease) cancelled the lease's validity timer, and only
   * the renewal's timeout re-armed anything, so with the holder's link stalled {@code onLost}, the state
   * listeners and the "validity elapsed" WARN came about 2 s after the validity ended here (1.7 s with
   * the default 2 s command timeout), while another process could already hold the lock.
   */
  @Test
  void listenersHearOfTheLossWhenValidityEndsWhileARenewalIsInFlight() throws Exception {
    RedisServer server = REDIS.server();
    try (TcpProxy proxy = TcpProxy.start(server.host(), server.port());
        RedisLockClient holder = RedisLockClient.builder().uri("redis://" + proxy.host() + ":" + proxy.port())
            .commandTimeout(COMMAND_TIMEOUT).build()) {
      Lease lease = holder.lock("lost-while-renewing", LockOptions.watched(LEASE)).acquire();
      // Listeners first, so a stall of the test thread cannot let the loss happen before they are attached.
      AtomicLong lostAt = new AtomicLong();
      CountDownLatch lost = new CountDownLatch(1);
      List<LeaseState> seen = new CopyOnWriteArrayList<>();
      AtomicLong listenerLostAt = new AtomicLong();
      lease.addListener((l, from, to) -> {
        seen.add(to);
        if (to == LeaseState.LOST) {
          listenerLostAt.set(System.nanoTime());
        }
      });
      lease.onLost(() -> {
        lostAt.set(System.nanoTime());
        lost.countDown();
      });
      proxy.blackhole(); // the holder's link stalls: the renewal goes out and never comes back
      // The client's ticker is System.nanoTime() (the default), so this is when validity ends. Read after the
      // blackhole: no renewal can extend it any more, whereas one landing between this read and the blackhole
      // (a stall of a renewal period, 500 ms) would make the loss look a period late. The clock is read before
      // the validity, so a stall in between can only make the loss look later, within the margin, not early.
      long validityEnd = System.nanoTime() + lease.remainingValidity().toNanos();

      assertThat(lost.await(20, TimeUnit.SECONDS)).as("onLost fired").isTrue();
      long lateMillis = TimeUnit.NANOSECONDS.toMillis(lostAt.get() - validityEnd);
      System.out.println("onLost " + lateMillis + " ms after the validity ended");
      assertThat(lateMillis).as("onLost in ms after the validity ended").isBetween(0L, MARGIN_MILLIS);
      assertThat(TimeUnit.NANOSECONDS.toMillis(listenerLostAt.get() - validityEnd))
          .as("state listener in ms after the validity ended").isBetween(0L, MARGIN_MILLIS);
      assertThat(seen).as("lost straight from HELD: the renewal had not failed yet")
          .containsExactly(LeaseState.LOST);
      proxy.resetAll();
      proxy.heal();
    }
  }
}
