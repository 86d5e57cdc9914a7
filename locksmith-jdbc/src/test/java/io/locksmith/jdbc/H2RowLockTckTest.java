package io.locksmith.jdbc;

import io.locksmith.LockClient;
import io.locksmith.tck.LockClientTck;
import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.h2.H2Database;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The exclusive lock contract in {@link JdbcLockMode#ROW_LOCK} mode on h2. */
class H2RowLockTckTest extends LockClientTck {
  @RegisterExtension
  static final SharedTopology<H2Database> H2 = H2Database.shared();

  @Override
  protected LockClient newClient() {
    return JdbcLockClient.builder().dataSource(TestDatabases.pool(H2.get())).mode(JdbcLockMode.ROW_LOCK)
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
