package io.locksmith.jdbc;

import org.junit.jupiter.api.Tag;

import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.h2.H2Database;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link JdbcFencedTable} on H2. */
@Tag("unit")
class H2FencedTableTest extends FencedTableContract {
  @RegisterExtension
  static final SharedTopology<H2Database> H2 = H2Database.shared();

  @Override
  DataSource dataSource() {
    return TestDatabases.pool(H2.get());
  }
}
