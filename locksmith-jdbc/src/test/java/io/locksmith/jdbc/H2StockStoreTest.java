package io.locksmith.jdbc;

import io.locksmith.LockClient;
import io.locksmith.recipes.StockStore;
import io.locksmith.tck.StockStoreTck;
import io.locksmith.testkit.h2.H2Database;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The stock contract on H2 behind a TCP server (the child JVMs connect to it too). */
class H2StockStoreTest extends StockStoreTck {
  private static H2Database h2;

  @BeforeAll
  static void start() {
    h2 = H2Database.server();
  }

  @AfterAll
  static void stop() {
    h2.close();
  }

  @Override
  protected LockClient newClient() {
    return JdbcLockClient.builder().dataSource(TestDatabases.pool(h2)).createTableIfMissing().build();
  }

  @Override
  protected StockStore store() {
    return JdbcStockStore.builder(TestDatabases.pool(h2)).build().createTableIfMissing();
  }

  @Override
  protected ChildFixture childFixture() {
    return new ChildFixture(JdbcStockFixture.class, h2.jdbcUrl() + " sa");
  }
}
