package io.locksmith.jdbc;

import io.locksmith.LockClient;
import io.locksmith.tck.LockClientTck;
import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.postgres.PostgresServer;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The exclusive lock contract in {@link JdbcLockMode#ADVISORY} mode on postgres. */
class PostgresAdvisoryTckTest extends LockClientTck {
  @RegisterExtension
  static final SharedTopology<PostgresServer> POSTGRES = PostgresServer.shared();

  @Override
  protected LockClient newClient() {
    return JdbcLockClient.builder().dataSource(TestDatabases.pool(POSTGRES.get())).mode(JdbcLockMode.ADVISORY)
        .createTableIfMissing().build();
  }

  /** No: an advisory lock is its session's: the client's close ends it. */
  @Override
  protected boolean keepsLocksReleasedAfterADelayPastClose() {
    return false;
  }
}
