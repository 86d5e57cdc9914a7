package io.locksmith.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.ClientOptions;
import io.locksmith.Lease;
import io.locksmith.LockClient;
import io.locksmith.LockObserver;
import io.locksmith.injvm.InJvmLockServer;
import io.locksmith.internal.DefaultLockClient;
import io.locksmith.micrometer.LocksmithMetrics;
import io.locksmith.testkit.LogCapture;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * An application's own {@code LockClient} bean is tracked (endpoint, health) and measured like the clients the
 * starter builds, once; the starter's own clients are not observed twice.
 */
@Tag("unit")
class ApplicationLockClientTest {

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(LocksmithMetricsAutoConfiguration.class, LocksmithAutoConfiguration.class))
      .withConfiguration(AutoConfigurations.of(BootLine.locksmithActuator()))
      .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
      .withPropertyValues("management.endpoints.web.exposure.include=locksmith");

  @Test
  void anApplicationClientsLeasesAreInTheEndpointAndItsMetersAreRecordedOnce() {
    InJvmLockServer server = new InJvmLockServer();
    runner.withBean("ownClient", LockClient.class, server::newClient).run(ctx -> {
      LockClient client = ctx.getBean(LockClient.class);
      assertThat(ctx.getBean(LockClients.class).get(LockClients.DEFAULT)).isSameAs(client);
      MeterRegistry registry = ctx.getBean(MeterRegistry.class);
      LocksmithEndpoint endpoint = ctx.getBean(LocksmithEndpoint.class);
      try (Lease lease = client.lock("own-1").acquire(Duration.ZERO)) {
        assertThat(endpoint.leases().get("default")).singleElement().satisfies(m ->
            assertThat(m).containsEntry("name", "own-1").containsEntry("fencingToken", lease.fencingToken()));
        assertThat(BootLine.health(ctx, "default").details()).containsEntry("held", 1);
        assertThat(registry.get(LocksmithMetrics.HELD).tags("client", "default", "backend", "in-jvm").gauge().value())
            .isEqualTo(1.0);
      }
      assertThat(endpoint.leases().get("default")).isEmpty();
      // the Lock view and a wait that runs out are acquisitions too; one call, one count (observed once)
      io.locksmith.DistributedLock lock = client.lock("own-2");
      assertThat(lock.tryLock()).isTrue();
      try (Lease other = server.newClient().lock("own-3").acquire(Duration.ZERO)) {
        assertThat(client.lock("own-3").tryAcquire()).isEmpty();
      }
      lock.unlock();
      assertThat(registry.get(LocksmithMetrics.ACQUIRE).tags("client", "default", "outcome", "granted", "kind", "exclusive")
          .timer().count()).isEqualTo(2);
      assertThat(registry.get(LocksmithMetrics.ACQUIRE).tags("client", "default", "outcome", "timeout").timer().count())
          .isEqualTo(1);
      // the release is reported on the client's event thread
      assertThat(LogCapture.eventually(Duration.ofSeconds(10), () ->
          registry.get(LocksmithMetrics.HELD).tags("client", "default").gauge().value() == 0.0)).isTrue();
    });
  }

  @Test
  void theStartersOwnClientsAreNotObservedAgain() {
    runner.withPropertyValues("locksmith.backend=in-jvm").run(ctx -> {
      LockClient client = ctx.getBean(LockClient.class);
      assertThat(ObservingLockClient.isObserving(client)).isFalse();
      client.lock("starter-1").acquire(Duration.ZERO).release();
      assertThat(ctx.getBean(MeterRegistry.class).get(LocksmithMetrics.ACQUIRE).tags("client", "default").timer().count())
          .isEqualTo(1);
    });
  }

  @Test
  void aClientWithAnObserverOfItsOwnIsTrackedButNotMeasuredTwice() {
    AtomicInteger told = new AtomicInteger();
    LockObserver own = new LockObserver() {
      @Override
      public void acquireCompleted(String lockName, String kind, Outcome outcome, Duration elapsed, Lease lease) {
        told.incrementAndGet();
      }
    };
    runner.withBean("ownClient", LockClient.class,
        () -> new InJvmLockServer().newClient(ClientOptions.builder().observer(own).build())).run(ctx -> {
          LockClient client = ctx.getBean(LockClient.class);
          try (Lease lease = client.lock("own-observed").acquire(Duration.ZERO)) {
            assertThat(ctx.getBean(LocksmithEndpoint.class).leases().get("default")).hasSize(1);
          }
          assertThat(told).hasValue(1);
          assertThat(ctx.getBean(MeterRegistry.class).find(LocksmithMetrics.ACQUIRE).timers()).isEmpty();
        });
  }

  @Test
  void aClientDeclaredAsItsConcreteTypeIsLeftAsItIsWithAWarning() {
    try (LogCapture log = new LogCapture()) {
      runner.withBean("concreteClient", DefaultLockClient.class, () -> (DefaultLockClient) new InJvmLockServer().newClient())
          .run(ctx -> {
            assertThat(ctx.getBean(LockClient.class)).isInstanceOf(DefaultLockClient.class);
            Map<String, List<Map<String, Object>>> leases = ctx.getBean(LocksmithEndpoint.class).leases();
            assertThat(leases.get("default")).isEmpty();
          });
      assertThat(log.text()).contains("LockClient bean 'concreteClient' is declared as " + DefaultLockClient.class.getName());
    }
  }
}
