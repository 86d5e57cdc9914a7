package io.locksmith.jdbc;

import io.locksmith.LockClient;
import io.locksmith.tck.LockClientTck;
import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.mariadb.MariaDbServer;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The exclusive lock contract in {@link JdbcLockMode#ROW_LOCK} mode on mariadb. */
class MariaDbRowLockTckTest extends LockClientTck {
  @RegisterExtension
  static final SharedTopology<MariaDbServer> MARIADB = MariaDbServer.shared();

  @Override
  protected LockClient newClient() {
    return JdbcLockClient.builder().dataSource(TestDatabases.pool(MARIADB.get())).mode(JdbcLockMode.ROW_LOCK)
        .createTableIfMissing().build();
  }

  /** Documented: another session's row lock cannot be ended through JDBC on this database. */
  @Override
  protected boolean forceUnlockReachesOtherClients() {
    return false;
  }

  /** No: a row lock is its connection's transaction: the client's close ends it. */
  @Override
  protected boolean keepsLocksReleasedAfterADelayPastClose() {
    return false;
  }
}
