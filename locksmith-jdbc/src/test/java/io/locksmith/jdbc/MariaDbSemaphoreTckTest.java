package io.locksmith.jdbc;

import io.locksmith.LockClient;
import io.locksmith.tck.SemaphoreTck;
import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.mariadb.MariaDbServer;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The whole semaphore contract on MariaDB (one server per test run). */
class MariaDbSemaphoreTckTest extends SemaphoreTck {
  @RegisterExtension
  static final SharedTopology<MariaDbServer> MARIADB = MariaDbServer.shared();

  @Override
  protected LockClient newClient() {
    return JdbcLockClient.builder().dataSource(TestDatabases.pool(MARIADB.get())).createTableIfMissing().build();
  }
}
