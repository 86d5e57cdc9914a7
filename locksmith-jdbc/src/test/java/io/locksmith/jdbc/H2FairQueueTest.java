package io.locksmith.jdbc;

import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.h2.H2Database;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link FairQueueContract} on H2 (in memory): waiters of other clients poll. */
class H2FairQueueTest extends FairQueueContract {
  @RegisterExtension
  static final SharedTopology<H2Database> H2 = H2Database.shared();

  @Override
  DataSource dataSource() {
    return TestDatabases.pool(H2.get());
  }
}
