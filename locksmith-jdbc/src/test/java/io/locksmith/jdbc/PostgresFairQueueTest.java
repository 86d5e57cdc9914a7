package io.locksmith.jdbc;

import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.postgres.PostgresServer;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link FairQueueContract} on PostgreSQL: waiters are woken by NOTIFY, so a dead head is a silent one. */
class PostgresFairQueueTest extends FairQueueContract {
  @RegisterExtension
  static final SharedTopology<PostgresServer> POSTGRES = PostgresServer.shared();

  @Override
  DataSource dataSource() {
    return TestDatabases.pool(POSTGRES.get());
  }
}
