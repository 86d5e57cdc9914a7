package io.locksmith.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.Lease;
import io.locksmith.LeaseState;
import io.locksmith.LockClient;
import io.locksmith.LockObserver;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * An uncertain lease does not take the instance out of service by default (a backend blip would pull
 * every instance at once); the old behaviour is an opt-in.
 */
@Tag("unit")
class LocksmithHealthTest {

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(LocksmithAutoConfiguration.class))
      .withConfiguration(AutoConfigurations.of(BootLine.locksmithActuator()))
      .withPropertyValues("locksmith.backend=in-jvm");

  /** A real lease of the in-JVM backend, reported as UNCERTAIN (as after a failed renewal). */
  private static Lease uncertain(Lease lease) {
    return (Lease) Proxy.newProxyInstance(Lease.class.getClassLoader(), new Class<?>[] {Lease.class}, (p, m, args) -> {
      if (m.getName().equals("state")) {
        return LeaseState.UNCERTAIN;
      }
      try {
        return m.invoke(lease, args);
      } catch (InvocationTargetException e) {
        throw e.getTargetException();
      }
    });
  }

  private static String statusWithOneUncertainLease(org.springframework.context.ApplicationContext ctx) throws InterruptedException {
    LockClient client = ctx.getBean(LockClient.class);
    Lease lease = client.lock("blip").acquire(Duration.ZERO);
    try {
      ctx.getBean(LeaseTrackers.class).byClient.get("default")
          .acquireCompleted("blip", "exclusive", LockObserver.Outcome.GRANTED, Duration.ZERO, uncertain(lease));
      BootLine.HealthView health = BootLine.health(ctx, "default");
      assertThat(health.details()).containsEntry("uncertain", 1L);
      return health.status();
    } finally {
      lease.release();
    }
  }

  @Test
  void anUncertainLeaseLeavesTheInstanceUpByDefault() {
    runner.run(ctx -> assertThat(statusWithOneUncertainLease(ctx)).isEqualTo("UP"));
  }

  @Test
  void outOfServiceForUncertainLeasesIsAnOptIn() {
    runner.withPropertyValues("locksmith.health.uncertain-status=out-of-service")
        .run(ctx -> assertThat(statusWithOneUncertainLease(ctx)).isEqualTo("OUT_OF_SERVICE"));
  }
}
