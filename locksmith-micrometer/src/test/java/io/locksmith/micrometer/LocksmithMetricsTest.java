package io.locksmith.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.ClientOptions;
import io.locksmith.Lease;
import io.locksmith.LockClient;
import io.locksmith.injvm.InJvmLockServer;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The meters of one in-JVM client, read from a {@link SimpleMeterRegistry}. */
class LocksmithMetricsTest {

  @Test
  void acquisitionsHoldsAndHeldLeasesAreMeasuredWithoutNameTags() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    LocksmithMetrics metrics = LocksmithMetrics.builder(registry).backend("in-jvm").client("orders").build();
    LockClient client = new InJvmLockServer().newClient(ClientOptions.builder().observer(metrics).build());
    try {
      Lease a = client.lock("order-1").acquire(Duration.ZERO);
      Lease b = client.fairLock("order-2").acquire(Duration.ZERO);
      assertThat(registry.get(LocksmithMetrics.HELD).tags("backend", "in-jvm", "client", "orders").gauge().value()).isEqualTo(2.0);
      assertThat(client.lock("order-1").tryAcquire()).isEmpty();
      a.release();
      b.release();
      assertThat(registry.get(LocksmithMetrics.HELD).gauge().value()).isZero();
      assertThat(registry.get(LocksmithMetrics.ACQUIRE).tags("outcome", "granted", "kind", "exclusive").timer().count()).isEqualTo(1);
      assertThat(registry.get(LocksmithMetrics.ACQUIRE).tags("outcome", "granted", "kind", "fair").timer().count()).isEqualTo(1);
      assertThat(registry.get(LocksmithMetrics.ACQUIRE).tags("outcome", "timeout").timer().count()).isEqualTo(1);
      assertThat(registry.get(LocksmithMetrics.HOLD).tags("end", "released").timers()).hasSize(2);
      for (Meter m : registry.getMeters()) {
        assertThat(m.getId().getTag("name")).as("no lock-name tag by default: %s", m.getId()).isNull();
        assertThat(m.getId().getTag("backend")).isEqualTo("in-jvm");
        assertThat(m.getId().getTag("client")).isEqualTo("orders");
      }
    } finally {
      client.close();
    }
  }

  @Test
  void aFenceGuardCountsItsRefusals() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    LocksmithMetrics metrics = LocksmithMetrics.builder(registry).backend("in-jvm").build();
    io.locksmith.FenceGuard guard = new io.locksmith.FenceGuard(e -> metrics.staleWriteRejected(e.resource()));
    guard.admit("stock-42", 9);
    for (long stale : new long[] {7, 8}) {
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> guard.admit("stock-42", stale))
          .isInstanceOf(io.locksmith.StaleTokenException.class);
    }
    assertThat(registry.get(LocksmithMetrics.STALE_WRITES).counter().count()).isEqualTo(2.0);
    assertThat(registry.get(LocksmithMetrics.STALE_WRITES).counter().getId().getTag("name")).isNull();
  }

  @Test
  void uncertainAndLostTransitionsAreCounted() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    LocksmithMetrics metrics = LocksmithMetrics.builder(registry).backend("in-jvm").build();
    InJvmLockServer server = new InJvmLockServer();
    LockClient client = server.newClient(ClientOptions.builder().observer(metrics).build());
    try {
      Lease lease = client.lock("x").acquire(Duration.ZERO);
      assertThat(client.forceUnlock("x")).isTrue();
      // the next renewal finds the hold gone: LOST
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (lease.isHeld() && System.nanoTime() < deadline) {
        lease.checkHeld();
        Thread.onSpinWait();
      }
      assertThat(lease.isHeld()).isFalse();
    } catch (io.locksmith.LeaseLostException expected) {
      // checkHeld reports the loss by throwing
    } finally {
      client.close();
    }
    assertThat(registry.get(LocksmithMetrics.TRANSITIONS).tags("state", "lost").counter().count()).isEqualTo(1.0);
    assertThat(registry.get(LocksmithMetrics.HOLD).tags("end", "lost").timer().count()).isEqualTo(1);
    assertThat(metrics.held()).isZero();
  }

  @Test
  void namesAreTaggedOnlyWhereOptedIn() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    LocksmithMetrics metrics = LocksmithMetrics.builder(registry).nameTagPatterns(List.of("nightly-.*")).build();
    LockClient client = new InJvmLockServer().newClient(ClientOptions.builder().observer(metrics).build());
    try {
      client.lock("nightly-report").acquire(Duration.ZERO).release();
      client.lock("order-17").acquire(Duration.ZERO).release();
      metrics.staleWriteRejected("order-17");
    } finally {
      client.close();
    }
    assertThat(registry.get(LocksmithMetrics.ACQUIRE).tags("name", "nightly-report").timer().count()).isEqualTo(1);
    assertThat(registry.get(LocksmithMetrics.ACQUIRE).tags("name", "other").timer().count()).isEqualTo(1);
    assertThat(registry.get(LocksmithMetrics.STALE_WRITES).tags("name", "other").counter().count()).isEqualTo(1.0);
  }

  @Test
  void degradedGrantsAreCountedWithoutWiringAListener() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    LocksmithMetrics metrics = LocksmithMetrics.builder(registry).backend("in-jvm").build();
    InJvmLockServer server = new InJvmLockServer();
    LockClient client = server.newClient(ClientOptions.builder().observer(metrics).build());
    io.locksmith.LockOptions efficiency = io.locksmith.LockOptions.builder()
        .degradation(io.locksmith.DegradationPolicy.localFallback()).build();
    try {
      client.lock("report", efficiency).acquire(Duration.ZERO).release();
      assertThat(registry.find(LocksmithMetrics.DEGRADED).counter()).as("not while the backend answers").isNull();
      server.setReachable(false);
      Lease degraded = client.lock("report", efficiency).acquire(Duration.ofSeconds(5));
      assertThat(degraded.isDegraded()).isTrue();
      degraded.release();
      assertThat(registry.get(LocksmithMetrics.DEGRADED).tags("backend", "in-jvm").counter().count()).isEqualTo(1.0);
      server.setReachable(true);
      client.lock("report", efficiency).acquire(Duration.ofSeconds(5)).release();
      assertThat(registry.get(LocksmithMetrics.DEGRADED).counter().count()).as("the backend is used again").isEqualTo(1.0);
    } finally {
      client.close();
    }
  }
}
