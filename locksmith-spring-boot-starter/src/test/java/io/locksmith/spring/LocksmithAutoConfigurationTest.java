package io.locksmith.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.ClientOptions;
import io.locksmith.Lease;
import io.locksmith.LockClient;
import io.locksmith.injvm.InJvmLockServer;
import io.locksmith.redis.RedisLockClient;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Conditions, customizers and misconfiguration messages of {@link LocksmithAutoConfiguration}, without servers. */
@Tag("unit")
class LocksmithAutoConfigurationTest {

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(LocksmithAutoConfiguration.class));

  @Test
  void noBackendConfiguredMeansNoPrimaryClientButARegistryAndTemplate() {
    runner.run(ctx -> {
      assertThat(ctx).hasNotFailed().doesNotHaveBean(LockClient.class).hasSingleBean(LockClients.class)
          .hasSingleBean(LockTemplate.class);
      assertThat(ctx.getBean(LockClients.class).primary()).isEmpty();
    });
  }

  @Test
  void inJvmBackendGivesAWorkingClientWithTheConfiguredNamespaceAndDefaultLease() {
    runner.withPropertyValues("locksmith.backend=in-jvm", "locksmith.namespace=shop", "locksmith.lease-time=10s",
        "locksmith.client-name=web-1").run(ctx -> {
          LockClient client = ctx.getBean(LockClient.class);
          assertThat(client.options().namespace()).isEqualTo("shop");
          assertThat(client.options().clientName()).contains("web-1");
          assertThat(client.options().defaultLockOptions().leaseTime()).isEqualTo(Duration.ofSeconds(10));
          assertThat(client.options().defaultLockOptions().watched()).isTrue();
          try (Lease lease = client.lock("a").acquire(Duration.ZERO)) {
            assertThat(lease.fencingToken()).isPositive();
          }
          assertThat(ctx.getBean(LockClients.class).get("default")).isSameAs(client);
        });
  }

  @Test
  void anApplicationsOwnLockClientWins() {
    runner.withPropertyValues("locksmith.backend=in-jvm").withUserConfiguration(OwnClient.class).run(ctx -> {
      assertThat(ctx).hasSingleBean(LockClient.class);
      assertThat(ctx.getBean(LockClient.class).options().namespace()).isEqualTo("mine");
      assertThat(ctx.getBean(LockClients.class).primary()).containsSame(ctx.getBean(LockClient.class));
    });
  }

  @Test
  void customizersRunForTheirBuilderTypeOnlyAndAfterTheProperties() {
    runner.withPropertyValues("locksmith.backend=in-jvm", "locksmith.client-name=from-properties",
        "locksmith.clients.second.backend=in-jvm").withUserConfiguration(Customizers.class).run(ctx -> {
          assertThat(ctx).hasNotFailed();
          assertThat(ctx.getBean(LockClient.class).options().clientName()).contains("customized-default");
          assertThat(ctx.getBean(LockClients.class).get("second").options().clientName()).contains("customized-second");
          // the Redis builder's customizer is never offered an in-JVM client
          assertThat(ctx.getBean(Customizers.class).redisCalls).isEmpty();
        });
  }

  @Test
  void severalClientsByName() {
    runner.withPropertyValues("locksmith.backend=in-jvm", "locksmith.clients.orders.backend=in-jvm",
        "locksmith.clients.orders.namespace=orders", "locksmith.clients.stock.backend=in-jvm").run(ctx -> {
          LockClients clients = ctx.getBean(LockClients.class);
          assertThat(clients.all()).containsOnlyKeys("default", "orders", "stock");
          assertThat(clients.get("orders").options().namespace()).isEqualTo("orders");
          assertThat(clients.get("orders")).isNotSameAs(clients.get("stock"));
          assertThat(ctx.getBean(LockTemplate.class).onClient("orders").callLocked("x", Duration.ZERO, () -> 42)).isEqualTo(42);
        });
  }

  @Test
  void redisWithoutUriFailsNamingTheProperty() {
    runner.withPropertyValues("locksmith.backend=redis").run(ctx ->
        assertThat(ctx).getFailure().rootCause().hasMessageContaining("locksmith.redis.uri"));
  }

  @Test
  void aMalformedRedisUriFailsNamingThePropertyWithoutThePassword() {
    runner.withPropertyValues("locksmith.redis.uri=redis://user:s3cret@localhost:6379/abc").run(ctx ->
        assertThat(ctx).getFailure().rootCause().hasMessageContaining("locksmith.redis.uri")
            .satisfies(e -> assertThat(e.getMessage()).doesNotContain("s3cret")));
  }

  @Test
  void aTooShortLeaseTimeFailsNamingTheProperty() {
    runner.withPropertyValues("locksmith.backend=in-jvm", "locksmith.lease-time=1ms").run(ctx ->
        assertThat(ctx).getFailure().rootCause().hasMessageContaining("locksmith.lease-time"));
  }

  @Test
  void aNamedClientWithoutBackendFailsNamingItsProperty() {
    runner.withPropertyValues("locksmith.clients.orders.namespace=o").run(ctx ->
        assertThat(ctx).getFailure().rootCause().hasMessageContaining("locksmith.clients.orders.backend"));
  }

  @Test
  void redlockWithTooFewNodesFailsNamingTheProperty() {
    runner.withPropertyValues("locksmith.redlock.nodes=redis://localhost:1").run(ctx ->
        assertThat(ctx).getFailure().rootCause().hasMessageContaining("locksmith.redlock.nodes"));
  }

  @Test
  void aBadJdbcModeFailsNamingTheProperty() {
    runner.withPropertyValues("locksmith.backend=jdbc", "locksmith.jdbc.mode=optimistic").withUserConfiguration(H2.class)
        .run(ctx -> assertThat(ctx).getFailure().rootCause().hasMessageContaining("locksmith.jdbc.mode"));
  }

  @Test
  void jdbcWithoutADataSourceFailsNamingTheProperty() {
    runner.withPropertyValues("locksmith.backend=jdbc").run(ctx ->
        assertThat(ctx).getFailure().rootCause().hasMessageContaining("locksmith.jdbc.data-source"));
  }

  @Test
  void zookeeperWithoutConnectStringOrCuratorBeanFailsNamingTheProperty() {
    runner.withPropertyValues("locksmith.backend=zookeeper").run(ctx ->
        assertThat(ctx).getFailure().rootCause().hasMessageContaining("locksmith.zookeeper.connect-string"));
  }

  @Test
  void aBackendWhoseModuleIsMissingFailsSayingWhichModuleToAdd() {
    runner.withClassLoader(new FilteredClassLoader("io.locksmith.zookeeper."))
        .withPropertyValues("locksmith.zookeeper.connect-string=localhost:2181").run(ctx ->
            assertThat(ctx).getFailure().rootCause().hasMessageContaining("locksmith.backend")
                .hasMessageContaining("locksmith-zookeeper"));
  }

  @Test
  void theAnnotationCanBeSwitchedOff() {
    runner.withPropertyValues("locksmith.backend=in-jvm", "locksmith.annotation.enabled=false").run(ctx ->
        assertThat(ctx).doesNotHaveBean(LocksmithAutoConfiguration.DistributedLockAdvisor.class));
  }

  @Configuration(proxyBeanMethods = false)
  static class OwnClient {
    @Bean
    LockClient myClient() {
      return new InJvmLockServer().newClient(ClientOptions.builder().namespace("mine").build());
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class H2 {
    @Bean
    DataSource dataSource() {
      JdbcDataSource ds = new JdbcDataSource();
      ds.setURL("jdbc:h2:mem:autoconfig;DB_CLOSE_DELAY=-1");
      return ds;
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class Customizers {
    final List<String> redisCalls = new CopyOnWriteArrayList<>();

    @Bean
    LockClientCustomizer<ClientOptions.Builder> optionsCustomizer() {
      return (name, builder) -> builder.clientName("customized-" + name);
    }

    @Bean
    LockClientCustomizer<RedisLockClient.Builder> redisCustomizer() {
      return (name, builder) -> redisCalls.add(name);
    }
  }
}
