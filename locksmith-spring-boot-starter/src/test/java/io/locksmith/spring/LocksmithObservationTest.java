package io.locksmith.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.Lease;
import io.locksmith.LockClient;
import io.locksmith.injvm.InJvmLockServer;
import io.locksmith.testkit.LogCapture;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Lock waits and holds as Micrometer observations (TestObservationRegistry): {@code @DistributedLock} calls and
 * {@code LockTemplate} on the starter's clients, any acquisition on an application's own; the lock name only when
 * opted in.
 */
@Tag("unit")
class LocksmithObservationTest {

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, LocksmithObservationAutoConfiguration.class,
          LocksmithAutoConfiguration.class))
      .withUserConfiguration(Beans.class);

  /** The annotated service. */
  public static class Stock {
    @DistributedLock(name = "stock:#{#p0}")
    public String sell(String sku) {
      return LockedCall.currentLease().orElseThrow().lockName();
    }

    @DistributedLock(name = "stock:#{#p0}", waitTime = "10s")
    public String sellWaiting(String sku) {
      return sku;
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class Beans {
    @Bean
    Stock stock() {
      return new Stock();
    }

    @Bean
    Started started() {
      return new Started();
    }

    @Bean
    ObservationRegistry observationRegistry(Started started) {
      TestObservationRegistry registry = TestObservationRegistry.create();
      registry.observationConfig().observationHandler(started);
      return registry;
    }
  }

  /** Every observation's context in the order they started (TestObservationRegistry keeps its own list private). */
  private static final class Started implements ObservationHandler<Observation.Context> {
    final List<Observation.Context> contexts = new CopyOnWriteArrayList<>();

    @Override
    public void onStart(Observation.Context context) {
      contexts.add(context);
    }

    @Override
    public boolean supportsContext(Observation.Context context) {
      return true;
    }
  }

  private static List<Observation.Context> all(ApplicationContext ctx) {
    return ctx.getBean(Started.class).contexts;
  }

  private static List<Observation.Context> named(ApplicationContext ctx, String name) {
    return all(ctx).stream().filter(c -> name.equals(c.getName())).toList();
  }

  @Test
  void aDistributedLockCallIsAWaitAndAHoldWithLowCardinalityTagsAndNoName() throws Exception {
    runner.withPropertyValues("locksmith.backend=in-jvm").run(ctx -> {
      TestObservationRegistry registry = (TestObservationRegistry) ctx.getBean(ObservationRegistry.class);
      // the bean stays what the starter built (an application may cast it to its backend's type)
      assertThat(ObservingLockClient.isObserving(ctx.getBean(LockClient.class))).isFalse();
      assertThat(ctx.getBean(Stock.class).sell("A1")).isEqualTo("stock:A1");
      TestObservationRegistryAssert.assertThat(registry).hasObservationWithNameEqualTo(LockObservations.WAIT).that()
          .hasBeenStarted().hasBeenStopped()
          .hasLowCardinalityKeyValue("outcome", "granted").hasLowCardinalityKeyValue("backend", "in-jvm")
          .hasLowCardinalityKeyValue("client", "default").hasLowCardinalityKeyValue("kind", "exclusive")
          .doesNotHaveLowCardinalityKeyValueWithKey("name").doesNotHaveError();
      // the hold ends when the release reaches the client's event thread
      assertThat(LogCapture.eventually(Duration.ofSeconds(10), () -> named(ctx, LockObservations.HOLD).stream()
          .anyMatch(c -> c.getLowCardinalityKeyValue("end") != null))).isTrue();
      TestObservationRegistryAssert.assertThat(registry).hasObservationWithNameEqualTo(LockObservations.HOLD).that()
          .hasBeenStopped().hasLowCardinalityKeyValue("end", "released").hasLowCardinalityKeyValue("kind", "exclusive")
          .doesNotHaveLowCardinalityKeyValueWithKey("name");
      for (Observation.Context c : all(ctx)) {
        assertThat(c.getAllKeyValues().stream().map(kv -> kv.getValue())).doesNotContain("stock:A1");
      }
    });
  }

  @Test
  void aWaitThatRunsOutIsATimeoutAndOneThatFailsIsAnErrorWithTheCause() throws Exception {
    runner.withPropertyValues("locksmith.backend=in-jvm").run(ctx -> {
      TestObservationRegistry registry = (TestObservationRegistry) ctx.getBean(ObservationRegistry.class);
      Stock stock = ctx.getBean(Stock.class);
      try (Lease other = ctx.getBean(LockClient.class).lock("stock:B2").acquire(Duration.ZERO)) {
        assertThatThrownBy(() -> stock.sell("B2")).isInstanceOf(LockNotAcquiredException.class);
        // an interrupted wait fails (as core's observer reports it): the observation carries the error
        Thread.currentThread().interrupt();
        try {
          assertThatThrownBy(() -> stock.sellWaiting("B2")).isInstanceOf(LockNotAcquiredException.class);
        } finally {
          Thread.interrupted();
        }
      }
      List<Observation.Context> waits = named(ctx, LockObservations.WAIT);
      assertThat(waits).hasSize(2); // the two calls (the test's own acquire is on the bean, not observed)
      assertThat(waits.get(0).getLowCardinalityKeyValue("outcome").getValue()).isEqualTo("timeout");
      assertThat(waits.get(0).getError()).isNull();
      assertThat(waits.get(1).getLowCardinalityKeyValue("outcome").getValue()).isEqualTo("failed");
      assertThat(waits.get(1).getError()).isInstanceOf(InterruptedException.class);
      assertThat(named(ctx, LockObservations.HOLD)).isEmpty();
    });
  }

  @Test
  void theLockNameIsATagOnlyForNamesThatMatchTheOptedInPatterns() throws Exception {
    runner.withPropertyValues("locksmith.backend=in-jvm", "locksmith.metrics.name-tags=nightly-.*").run(ctx -> {
      TestObservationRegistry registry = (TestObservationRegistry) ctx.getBean(ObservationRegistry.class);
      ctx.getBean(LockTemplate.class).runLocked("nightly-report", Duration.ZERO, () -> { });
      ctx.getBean(Stock.class).sell("C3");
      List<Observation.Context> waits = named(ctx, LockObservations.WAIT);
      assertThat(waits).extracting(c -> c.getLowCardinalityKeyValue("name").getValue())
          .containsExactly("nightly-report", "other");
    });
  }

  @Test
  void anApplicationsOwnClientIsObservedToo() throws Exception {
    runner.withBean("ownClient", LockClient.class, () -> new InJvmLockServer().newClient()).run(ctx -> {
      TestObservationRegistry registry = (TestObservationRegistry) ctx.getBean(ObservationRegistry.class);
      ctx.getBean(Stock.class).sell("D4");
      ctx.getBean(LockClient.class).readWriteLock("report").writeLock().runLocked(Duration.ZERO, () -> { });
      assertThat(named(ctx, LockObservations.WAIT)).extracting(c -> c.getLowCardinalityKeyValue("kind").getValue())
          .containsExactly("exclusive", "write");
      assertThat(named(ctx, LockObservations.WAIT)).allSatisfy(c -> {
        assertThat(c.getLowCardinalityKeyValue("client").getValue()).isEqualTo("default");
        assertThat(c.getLowCardinalityKeyValue("outcome").getValue()).isEqualTo("granted");
      });
    });
  }

  @Test
  void withoutAnObservationRegistryTheClientsAreNotWrapped() {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(LocksmithObservationAutoConfiguration.class, LocksmithAutoConfiguration.class))
        .withPropertyValues("locksmith.backend=in-jvm")
        .run(ctx -> assertThat(ObservingLockClient.isObserving(ctx.getBean(LockClient.class))).isFalse());
  }
}
