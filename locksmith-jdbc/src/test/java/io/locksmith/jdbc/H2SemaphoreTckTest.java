package io.locksmith.jdbc;

import io.locksmith.LockClient;
import io.locksmith.tck.SemaphoreTck;
import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.h2.H2Database;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The whole semaphore contract on H2 (in memory). */
class H2SemaphoreTckTest extends SemaphoreTck {
  @RegisterExtension
  static final SharedTopology<H2Database> H2 = H2Database.shared();

  @Override
  protected LockClient newClient() {
    return JdbcLockClient.builder().dataSource(TestDatabases.pool(H2.get())).createTableIfMissing().build();
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
