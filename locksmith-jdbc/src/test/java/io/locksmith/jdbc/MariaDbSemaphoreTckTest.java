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

  /**
   * Documented (docs/jdbc.md, Operators): without a notification channel, a holder in another client
   * learns of a force-unlock at its next renewal, a third of its lease (10 s of the suite's 30 s), not at
   * once; the holder's own client is told at once.
   */
  @Override
  protected java.time.Duration evictionNoticeBound() {
    return java.time.Duration.ofSeconds(13);
  }
}
