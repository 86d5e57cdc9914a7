package io.locksmith.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.Lease;
import io.locksmith.LockClient;
import io.locksmith.injvm.InJvmLockServer;
import io.locksmith.micrometer.LocksmithMetrics;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** Metrics through Micrometer's SimpleMeterRegistry, the health contributor and the locksmith endpoint. */
@Tag("unit")
class LocksmithObservabilityTest {

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(LocksmithMetricsAutoConfiguration.class, LocksmithAutoConfiguration.class))
      .withConfiguration(AutoConfigurations.of(BootLine.locksmithActuator()))
      .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
      .withPropertyValues("locksmith.backend=in-jvm", "locksmith.clients.audit.backend=in-jvm",
          "management.endpoints.web.exposure.include=locksmith");

  @Test
  void everyClientReportsToTheRegistryTaggedByClientAndBackendWithoutNames() throws Exception {
    runner.run(ctx -> {
      MeterRegistry registry = ctx.getBean(MeterRegistry.class);
      LockClients clients = ctx.getBean(LockClients.class);
      try (Lease lease = clients.get("default").lock("order-1").acquire(Duration.ZERO)) {
        clients.get("audit").lock("order-1").acquire(Duration.ZERO).release();
        assertThat(registry.get(LocksmithMetrics.HELD).tags("client", "default", "backend", "in-jvm").gauge().value()).isEqualTo(1.0);
        assertThat(registry.get(LocksmithMetrics.HELD).tags("client", "audit").gauge().value()).isZero();
      }
      assertThat(registry.get(LocksmithMetrics.ACQUIRE).tags("client", "audit", "outcome", "granted", "kind", "exclusive")
          .timer().count()).isEqualTo(1);
      for (Meter m : registry.getMeters()) {
        assertThat(m.getId().getTag("name")).isNull();
      }
    });
  }

  @Test
  void nameTagsAreOptIn() {
    runner.withPropertyValues("locksmith.metrics.name-tags=nightly-.*").run(ctx -> {
      ctx.getBean(LockClient.class).lock("nightly-report").acquire(Duration.ZERO).release();
      assertThat(ctx.getBean(MeterRegistry.class).get(LocksmithMetrics.ACQUIRE).tags("name", "nightly-report").timer().count())
          .isEqualTo(1);
    });
  }

  @Test
  void healthIsPerClientAndTheEndpointListsHeldLeases() throws Exception {
    runner.run(ctx -> {
      LockClient client = ctx.getBean(LockClient.class);
      LocksmithEndpoint endpoint = ctx.getBean(LocksmithEndpoint.class);
      try (Lease lease = client.lock("held-one").acquire(Duration.ZERO)) {
        BootLine.HealthView up = BootLine.health(ctx, "default");
        assertThat(up.status()).isEqualTo("UP");
        assertThat(up.details()).containsEntry("held", 1).containsEntry("uncertain", 0L);
        assertThat(BootLine.health(ctx, "audit").status()).isEqualTo("UP");
        Map<String, List<Map<String, Object>>> leases = endpoint.leases();
        assertThat(leases.get("default")).singleElement().satisfies(m -> {
          assertThat(m).containsEntry("name", "held-one").containsEntry("state", "HELD")
              .containsEntry("fencingToken", lease.fencingToken());
        });
        assertThat(leases.get("audit")).isEmpty();
      }
      assertThat(endpoint.leases().get("default")).isEmpty();
    });
  }

  @Test
  void anUnreachableBackendIsDown() {
    InJvmLockServer server = new InJvmLockServer();
    runner.withBean("lockClient", LockClient.class, server::newClient).run(ctx -> {
      assertThat(BootLine.health(ctx, "default").status()).isEqualTo("UP");
      server.setReachable(false);
      assertThat(BootLine.health(ctx, "default").status()).isEqualTo("DOWN");
      server.setReachable(true);
      assertThat(BootLine.health(ctx, "default").status()).isEqualTo("UP");
    });
  }
}
