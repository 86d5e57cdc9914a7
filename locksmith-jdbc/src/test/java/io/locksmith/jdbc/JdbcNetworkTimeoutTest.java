package io.locksmith.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.Lease;
import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.postgres.PostgresServer;
import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 23 item 9: the network timeout the client sets on a borrowed connection is given back with the
 * connection. HikariCP resets it itself; a pool that does not (here a minimal one over {@link
 * DriverManager}) would otherwise hand the application a connection whose reads give up after the lock
 * client's command timeout.
 */
class JdbcNetworkTimeoutTest {
  @RegisterExtension
  static final SharedTopology<PostgresServer> PG = PostgresServer.shared();

  @Test
  void leaseModeGivesConnectionsBackWithTheirNetworkTimeout() throws Exception {
    check(JdbcLockMode.LEASE);
  }

  @Test
  void rowLockModeGivesConnectionsBackWithTheirNetworkTimeout() throws Exception {
    check(JdbcLockMode.ROW_LOCK);
  }

  private void check(JdbcLockMode mode) throws Exception {
    try (PlainPool pool = new PlainPool(PG.get().jdbcUrl())) {
      try (JdbcLockClient client = JdbcLockClient.builder().dataSource(pool).mode(mode)
          .listenerDataSource(TestDatabases.pool(PG.get())).commandTimeout(Duration.ofSeconds(2))
          .createTableIfMissing().build()) {
        String name = "net-timeout-" + UUID.randomUUID();
        try (Lease lease = client.lock(name).acquire()) {
          assertThat(lease.isHeld()).isTrue();
        }
        assertThat(client.lock(name).inspect()).isEmpty();
      }
      assertThat(pool.physical).isNotEmpty();
      for (Connection c : pool.physical) {
        assertThat(c.getNetworkTimeout()).as("the network timeout of a connection given back to the pool").isZero();
      }
    }
  }

  /** A minimal pool that does not reset connections it takes back (as some pools do not). */
  static final class PlainPool implements DataSource, AutoCloseable {
    private final String url;
    private final ConcurrentLinkedDeque<Connection> idle = new ConcurrentLinkedDeque<>();
    final List<Connection> physical = new CopyOnWriteArrayList<>();

    PlainPool(String url) {
      this.url = url;
    }

    @Override
    public Connection getConnection() throws SQLException {
      Connection c = idle.pollFirst();
      if (c == null) {
        c = DriverManager.getConnection(url, "postgres", "");
        physical.add(c);
      }
      Connection real = c;
      return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class},
          (proxy, m, args) -> {
            if (m.getName().equals("close")) {
              idle.addFirst(real); // back to the pool as it is
              return null;
            }
            if (m.getName().equals("isClosed")) {
              return real.isClosed();
            }
            try {
              return m.invoke(real, args);
            } catch (InvocationTargetException e) {
              throw e.getCause();
            }
          });
    }

    @Override
    public Connection getConnection(String user, String password) throws SQLException {
      return getConnection();
    }

    @Override
    public void close() throws SQLException {
      for (Connection c : physical) {
        c.close();
      }
    }

    @Override
    public PrintWriter getLogWriter() {
      return null;
    }

    @Override
    public void setLogWriter(PrintWriter out) {
      // not used
    }

    @Override
    public void setLoginTimeout(int seconds) {
      // not used
    }

    @Override
    public int getLoginTimeout() {
      return 0;
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
      throw new SQLFeatureNotSupportedException();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
      throw new SQLException("not a wrapper");
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) {
      return false;
    }
  }
}
