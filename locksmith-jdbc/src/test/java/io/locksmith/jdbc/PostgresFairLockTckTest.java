package io.locksmith.jdbc;

import io.locksmith.LockClient;
import io.locksmith.tck.FairLockTck;
import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.postgres.PostgresServer;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The whole lock contract, and the fair lock's own, on the lease-mode fair lock of PostgreSQL. */
class PostgresFairLockTckTest extends FairLockTck {
  @RegisterExtension
  static final SharedTopology<PostgresServer> POSTGRES = PostgresServer.shared();

  @Override
  protected LockClient newClient() {
    return JdbcLockClient.builder().dataSource(TestDatabases.pool(POSTGRES.get())).createTableIfMissing().build();
  }
}
