package io.locksmith.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.LockClient;
import io.locksmith.spring.integration.LocksmithLockRegistry;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.support.locks.DefaultLockRegistry;
import org.springframework.integration.support.locks.LockRegistry;

/** When {@link LocksmithSpringIntegrationAutoConfiguration} gives a LockRegistry, and when it steps aside. */
@Tag("unit")
class SpringIntegrationAutoConfigurationTest {
  private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(
      AutoConfigurations.of(LocksmithAutoConfiguration.class, LocksmithSpringIntegrationAutoConfiguration.class));

  @Test
  void aRegistryOverThePrimaryClient() {
    runner.withPropertyValues("locksmith.backend=in-jvm").run(ctx -> {
      assertThat(ctx).hasNotFailed().hasSingleBean(LockRegistry.class);
      LocksmithLockRegistry registry = ctx.getBean(LocksmithLockRegistry.class);
      assertThat(registry.client()).isSameAs(ctx.getBean(LockClient.class));
      Lock lock = registry.obtain("invoice-7");
      lock.lock();
      try {
        assertThat(registry.fencingToken("invoice-7")).isPresent();
        assertThat(ctx.getBean(LockClient.class).inspect("invoice-7")).isPresent();
      } finally {
        lock.unlock();
      }
    });
  }

  @Test
  void theApplicationsOwnRegistryWins() {
    runner.withPropertyValues("locksmith.backend=in-jvm").withUserConfiguration(OwnRegistry.class).run(ctx -> {
      assertThat(ctx).hasNotFailed().hasSingleBean(LockRegistry.class).doesNotHaveBean(LocksmithLockRegistry.class);
      assertThat(ctx.getBean(LockRegistry.class)).isInstanceOf(DefaultLockRegistry.class);
    });
  }

  @Test
  void noClientNoRegistry() {
    runner.run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean(LockRegistry.class));
  }

  @Test
  void twoClientBeansAndNoPrimaryNoRegistry() {
    runner.withUserConfiguration(TwoClients.class).run(ctx ->
        assertThat(ctx).hasNotFailed().doesNotHaveBean(LockRegistry.class));
  }

  @Test
  void withoutSpringIntegrationOrTheAdapterNoRegistry() {
    runner.withPropertyValues("locksmith.backend=in-jvm").withClassLoader(new FilteredClassLoader(LockRegistry.class))
        .run(ctx -> assertThat(ctx).hasNotFailed().hasSingleBean(LockClient.class)
            .doesNotHaveBean(LocksmithLockRegistry.class));
    runner.withPropertyValues("locksmith.backend=in-jvm")
        .withClassLoader(new FilteredClassLoader(LocksmithLockRegistry.class))
        .run(ctx -> assertThat(ctx).hasNotFailed().hasSingleBean(LockClient.class)
            .doesNotHaveBean(LockRegistry.class));
  }

  @Configuration(proxyBeanMethods = false)
  static class OwnRegistry {
    @Bean
    LockRegistry myRegistry() {
      return new DefaultLockRegistry();
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class TwoClients {
    private final io.locksmith.injvm.InJvmLockServer server = new io.locksmith.injvm.InJvmLockServer();

    @Bean
    LockClient first() {
      return server.newClient();
    }

    @Bean
    LockClient second() {
      return server.newClient();
    }
  }
}
