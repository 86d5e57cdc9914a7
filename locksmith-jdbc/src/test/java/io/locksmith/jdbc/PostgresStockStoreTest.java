package io.locksmith.jdbc;

import io.locksmith.LockClient;
import io.locksmith.recipes.StockStore;
import io.locksmith.tck.StockStoreTck;
import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.postgres.PostgresServer;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The stock contract on PostgreSQL: JDBC locks and {@link JdbcStockStore} in one database. */
class PostgresStockStoreTest extends StockStoreTck {
  @RegisterExtension
  static final SharedTopology<PostgresServer> POSTGRES = PostgresServer.shared();

  @Override
  protected LockClient newClient() {
    return JdbcLockClient.builder().dataSource(TestDatabases.pool(POSTGRES.get())).createTableIfMissing().build();
  }

  @Override
  protected StockStore store() {
    return JdbcStockStore.builder(TestDatabases.pool(POSTGRES.get())).build().createTableIfMissing();
  }

  @Override
  protected ChildFixture childFixture() {
    return new ChildFixture(JdbcStockFixture.class, POSTGRES.get().jdbcUrl() + " postgres");
  }
}
