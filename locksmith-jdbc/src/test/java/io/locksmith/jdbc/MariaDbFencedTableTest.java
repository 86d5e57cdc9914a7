package io.locksmith.jdbc;

import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.mariadb.MariaDbServer;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link JdbcFencedTable} on MariaDb. */
class MariaDbFencedTableTest extends FencedTableContract {
  @RegisterExtension
  static final SharedTopology<MariaDbServer> MARIADB = MariaDbServer.shared();

  @Override
  DataSource dataSource() {
    return TestDatabases.pool(MARIADB.get());
  }
}
