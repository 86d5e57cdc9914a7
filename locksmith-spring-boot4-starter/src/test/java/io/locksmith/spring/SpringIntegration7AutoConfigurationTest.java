package io.locksmith.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.LockClient;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.ResolvableType;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.LockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/**
 * Boot 4 only: the registry {@link LocksmithSpringIntegrationAutoConfiguration} gives is Spring Integration
 * 7's (locksmith-spring-integration7): a {@code LockRegistry<DistributedLock>} whose locks take a ttl and
 * whose {@code renewLock(key, ttl)} works. With the SI 6.5 adapter on Boot 4 the bean was not a {@code
 * LockRegistry<DistributedLock>} candidate, its locks were no {@code DistributedLock}, and {@code
 * renewLock(key, ttl)} threw {@link AbstractMethodError}.
 */
class SpringIntegration7AutoConfigurationTest {
  private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(
      AutoConfigurations.of(LocksmithAutoConfiguration.class, LocksmithSpringIntegrationAutoConfiguration.class));

  @Test
  void theRegistryIsSpringIntegration7s() {
    runner.withPropertyValues("locksmith.backend=in-jvm").run(ctx -> {
      assertThat(ctx).hasNotFailed();
      String[] typed = ctx.getBeanNamesForType(ResolvableType.forClassWithGenerics(LockRegistry.class, DistributedLock.class));
      assertThat(typed).as("a LockRegistry<DistributedLock> candidate").hasSize(1);
      @SuppressWarnings("unchecked")
      RenewableLockRegistry<DistributedLock> registry = ctx.getBean(typed[0], RenewableLockRegistry.class);
      Object lock = registry.obtain("si7-order-1");
      assertThat(lock).as("SI 7's DistributedLock").isInstanceOf(DistributedLock.class);
      DistributedLock distributed = (DistributedLock) lock;
      distributed.lock(Duration.ofSeconds(5));
      try {
        registry.renewLock("si7-order-1", Duration.ofSeconds(5));
        assertThat(ctx.getBean(LockClient.class).inspect("si7-order-1")).isPresent();
      } finally {
        distributed.unlock();
      }
      assertThat(ctx.getBean(LockClient.class).inspect("si7-order-1")).isEmpty();
    });
  }
}
