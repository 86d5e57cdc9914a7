package io.locksmith.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import io.locksmith.LockClient;
import io.locksmith.recipes.StockStore;
import io.locksmith.tck.StockSellerProcess;

/**
 * A child JVM's locks and stock for the JDBC stock suites: argument {@code "<JDBC URL> <user>"}; a pool of
 * its own, JDBC locks and a {@link JdbcStockStore} on the same database.
 */
public final class JdbcStockFixture implements StockSellerProcess.Fixture {
  private final HikariDataSource pool;
  private final JdbcLockClient locks;
  private final JdbcStockStore store;

  public JdbcStockFixture(String urlAndUser) {
    String[] a = urlAndUser.split(" ");
    pool = TestDatabases.newPool(a[0], a[1], 8);
    locks = JdbcLockClient.builder().dataSource(pool).build();
    store = JdbcStockStore.builder(pool).build();
  }

  @Override
  public LockClient lockClient() {
    return locks;
  }

  @Override
  public StockStore store() {
    return store;
  }

  @Override
  public void close() {
    locks.close();
    pool.close();
  }
}
