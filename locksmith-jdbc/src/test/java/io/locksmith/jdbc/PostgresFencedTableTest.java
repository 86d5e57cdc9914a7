package io.locksmith.jdbc;

import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.postgres.PostgresServer;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link JdbcFencedTable} on Postgres. */
class PostgresFencedTableTest extends FencedTableContract {
  @RegisterExtension
  static final SharedTopology<PostgresServer> POSTGRES = PostgresServer.shared();

  @Override
  DataSource dataSource() {
    return TestDatabases.pool(POSTGRES.get());
  }
}
