package io.locksmith.jdbc;

import io.locksmith.LockClient;
import io.locksmith.tck.SemaphoreTck;
import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.postgres.PostgresServer;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The whole semaphore contract on PostgreSQL (one server per test run). */
class PostgresSemaphoreTckTest extends SemaphoreTck {
  @RegisterExtension
  static final SharedTopology<PostgresServer> POSTGRES = PostgresServer.shared();

  @Override
  protected LockClient newClient() {
    return JdbcLockClient.builder().dataSource(TestDatabases.pool(POSTGRES.get())).createTableIfMissing().build();
  }
}
