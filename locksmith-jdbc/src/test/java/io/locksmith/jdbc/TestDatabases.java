package io.locksmith.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.locksmith.testkit.h2.H2Database;
import io.locksmith.testkit.mariadb.MariaDbServer;
import io.locksmith.testkit.postgres.PostgresServer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;

/**
 * Connection pools over the test run's shared databases, one per database, closed when the JVM exits
 * (after JUnit closed the servers: a pool of a stopped server only logs). Thread-safe.
 */
final class TestDatabases {
  private static final Map<String, HikariDataSource> POOLS = new ConcurrentHashMap<>();

  static {
    Runtime.getRuntime().addShutdownHook(new Thread(() -> POOLS.values().forEach(HikariDataSource::close)));
  }

  private TestDatabases() {}

  static DataSource pool(PostgresServer pg) {
    return pool(pg.jdbcUrl(), "postgres", "");
  }

  static DataSource pool(MariaDbServer mariadb) {
    return pool(mariadb.jdbcUrl(), "root", "");
  }

  static DataSource pool(H2Database h2) {
    return pool(h2.jdbcUrl(), "sa", "");
  }

  /** A fresh pool the caller closes: for tests that need one of a given size. */
  static HikariDataSource newPool(String url, String user, int size) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setUsername(user);
    config.setPassword("");
    config.setMaximumPoolSize(size);
    config.setMinimumIdle(0);
    config.setConnectionTimeout(30_000);
    config.setPoolName("test-" + Integer.toHexString(url.hashCode()));
    return new HikariDataSource(config);
  }

  private static DataSource pool(String url, String user, String password) {
    return POOLS.computeIfAbsent(url, u -> newPool(u, user, 40));
  }
}
