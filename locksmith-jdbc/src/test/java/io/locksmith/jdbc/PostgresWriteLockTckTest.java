package io.locksmith.jdbc;

import io.locksmith.LockClient;
import io.locksmith.tck.WriteLockTck;
import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.postgres.PostgresServer;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The read-write lock contract (and the whole lock contract on its write side) on PostgreSQL (one server per test run). */
class PostgresWriteLockTckTest extends WriteLockTck {
  @RegisterExtension
  static final SharedTopology<PostgresServer> POSTGRES = PostgresServer.shared();

  @Override
  protected LockClient newClient() {
    return JdbcLockClient.builder().dataSource(TestDatabases.pool(POSTGRES.get())).createTableIfMissing().build();
  }
}
