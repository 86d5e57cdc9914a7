package io.locksmith.jdbc;

import io.locksmith.LockClient;
import io.locksmith.tck.LockClientTck;
import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.postgres.PostgresServer;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The exclusive lock contract in {@link JdbcLockMode#ROW_LOCK} mode on postgres. */
class PostgresRowLockTckTest extends LockClientTck {
  @RegisterExtension
  static final SharedTopology<PostgresServer> POSTGRES = PostgresServer.shared();

  @Override
  protected LockClient newClient() {
    return JdbcLockClient.builder().dataSource(TestDatabases.pool(POSTGRES.get())).mode(JdbcLockMode.ROW_LOCK)
        .createTableIfMissing().build();
  }

  /** No: a row lock is its connection's transaction: the client's close ends it. */
  @Override
  protected boolean keepsLocksReleasedAfterADelayPastClose() {
    return false;
  }
}
