package io.locksmith.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.Lease;
import io.locksmith.LockClient;
import io.locksmith.jdbc.JdbcLockClient;
import io.locksmith.testkit.postgres.PostgresServer;
import io.locksmith.testkit.SharedTopology;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The JDBC auto-configuration on the application's DataSource, against a real PostgreSQL. */
@SpringBootTest(classes = JdbcAutoConfigurationTest.App.class)
@DirtiesContext
class JdbcAutoConfigurationTest {

  @RegisterExtension
  static final SharedTopology<PostgresServer> PG = PostgresServer.shared();

  @DynamicPropertySource
  static void postgres(DynamicPropertyRegistry registry) {
    registry.add("spring.datasource.url", () -> PG.get().jdbcUrl());
    registry.add("locksmith.backend", () -> "jdbc");
    registry.add("locksmith.jdbc.table", () -> "boot_locks");
    registry.add("locksmith.jdbc.create-table", () -> "true");
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class App {
    @Bean
    SampleLockedService sampleLockedService() {
      return new SampleLockedService();
    }
  }

  @Autowired LockClient client;
  @Autowired SampleLockedService service;
  @Autowired JdbcTemplate jdbc;

  @Test
  void theApplicationsDataSourceCarriesTheLocksInTheConfiguredTable() throws Exception {
    assertThat(client).isInstanceOf(JdbcLockClient.class);
    assertThat(((JdbcLockClient) client).table()).isEqualTo("boot_locks");
    long first = service.tokenOf("jdbc-it");
    assertThat(service.tokenOf("jdbc-it")).isGreaterThan(first);
    try (Lease lease = client.lock("jdbc-held").acquire(Duration.ofSeconds(2))) {
      assertThat(jdbc.queryForObject("select count(*) from boot_locks where lock_name = 'jdbc-held' and owner is not null", Long.class)).isEqualTo(1L);
    }
  }
}
