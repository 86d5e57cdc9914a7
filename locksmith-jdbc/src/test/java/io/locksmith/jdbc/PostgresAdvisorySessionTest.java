package io.locksmith.jdbc;

import static io.locksmith.jdbc.JdbcRefusalTest.execute;
import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.locksmith.Lease;
import io.locksmith.LeaseState;
import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.postgres.PostgresServer;
import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 23, item 6: an advisory lock belongs to a server session, so the client must know which session
 * holds it. An unlock that fails without breaking the connection must not give that session back to the
 * pool still holding the lock; and a session that is not the one granted (a transaction-pooling proxy
 * routed the check elsewhere, or routed another client to the holder's session, where the lock is
 * re-entrant) must not pass for the holder.
 */
class PostgresAdvisorySessionTest {
  @RegisterExtension
  static final SharedTopology<PostgresServer> PG = PostgresServer.shared();

  /**
   * The pool's sessions resolve {@code pg_advisory_unlock} to a function in schema {@code trap} that
   * fails like a statement timeout (SQLState 57014) and leaves the connection healthy. The session still
   * holds the lock afterwards, unless the client ends it.
   */
  @Test
  void anUnlockThatFailsEndsTheSessionInsteadOfPoolingItWithTheLock() throws Exception {
    DataSource admin = TestDatabases.pool(PG.get());
    execute(admin, "CREATE SCHEMA IF NOT EXISTS trap");
    execute(admin, "CREATE OR REPLACE FUNCTION trap.pg_advisory_unlock(bigint) RETURNS boolean LANGUAGE plpgsql AS"
        + " $$BEGIN RAISE EXCEPTION 'canceling statement due to statement timeout' USING ERRCODE = '57014'; END$$");
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(PG.get().jdbcUrl());
    config.setUsername("postgres");
    config.setMaximumPoolSize(2);
    config.setMinimumIdle(2); // the failed session would stay pooled, idle, holding the lock
    config.setConnectionInitSql("SET search_path = trap, pg_catalog, public");
    try (HikariDataSource trapped = new HikariDataSource(config);
        JdbcLockClient holder = JdbcLockClient.builder().dataSource(trapped).mode(JdbcLockMode.ADVISORY)
            .createTableIfMissing().build();
        JdbcLockClient other = JdbcLockClient.builder().dataSource(admin).mode(JdbcLockMode.ADVISORY).build()) {
      Lease lease = holder.lock("advisory-unlock-fails").acquire();
      lease.release();
      // the aborted session ends at once; 3 s covers the server noticing the closed socket on a loaded host
      assertThat(other.lock("advisory-unlock-fails").tryAcquire(Duration.ofSeconds(3)))
          .as("the session that failed to unlock no longer holds the lock").isPresent();
    } finally {
      execute(admin, "DROP SCHEMA IF EXISTS trap CASCADE");
    }
  }

  /**
   * A data source that, like a transaction-pooling proxy, runs each statement on whichever server session
   * the test routes it to. Client X is granted on session A; client Y routed to A must not be granted:
   * the advisory lock is re-entrant per session, so the server alone would grant it again.
   */
  @Test
  void anotherClientRoutedToTheHoldersSessionIsNotGranted() throws Exception {
    try (Connection a = connect(); Connection b = connect()) {
      Routing routing = new Routing(a);
      try (JdbcLockClient x = JdbcLockClient.builder().dataSource(routing.dataSource()).mode(JdbcLockMode.ADVISORY)
          .createTableIfMissing().build();
          JdbcLockClient y = JdbcLockClient.builder().dataSource(routing.dataSource()).mode(JdbcLockMode.ADVISORY)
              .build();
          Lease held = x.lock("advisory-routed-twice").acquire()) {
        assertThat(y.lock("advisory-routed-twice").tryAcquire()).as("no second grant on the holder's session")
            .isEmpty();
        assertThat(held.isHeld()).isTrue();
      }
    }
  }

  /** Once X's checks land on session B, which does not hold the lock, X's lease is LOST, not held. */
  @Test
  void theHolderCheckedFromAnotherSessionIsLost() throws Exception {
    try (Connection a = connect(); Connection b = connect()) {
      Routing routing = new Routing(a);
      try (JdbcLockClient x = JdbcLockClient.builder().dataSource(routing.dataSource()).mode(JdbcLockMode.ADVISORY)
          .createTableIfMissing().build()) {
        Lease held = x.lock("advisory-routed-away").acquire();
        CountDownLatch lost = new CountDownLatch(1);
        held.onLost(lost::countDown);
        routing.to(b);
        // the watchdog checks every 500 ms; 5 s allows for a loaded host
        assertThat(lost.await(5, TimeUnit.SECONDS)).as("LOST once checked from another session").isTrue();
        assertThat(held.state()).isEqualTo(LeaseState.LOST);
      }
    }
  }

  private static Connection connect() throws SQLException {
    return DriverManager.getConnection(PG.get().jdbcUrl());
  }

  /** Hands out handles that run every call on the session currently routed to; closing one keeps it open. */
  private static final class Routing {
    private volatile Connection current;

    Routing(Connection first) {
      this.current = first;
    }

    void to(Connection session) {
      current = session;
    }

    DataSource dataSource() {
      return (DataSource) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {DataSource.class},
          (p, m, args) -> switch (m.getName()) {
            case "getConnection" -> handle();
            case "getLogWriter" -> (PrintWriter) null;
            case "getLoginTimeout" -> 0;
            case "getParentLogger" -> Logger.getGlobal();
            case "isWrapperFor" -> false;
            case "hashCode" -> System.identityHashCode(p);
            case "equals" -> p == args[0];
            case "toString" -> "routing data source";
            default -> null;
          });
    }

    private Connection handle() {
      boolean[] closed = {false};
      return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class},
          (p, m, args) -> {
            switch (m.getName()) {
              case "close" -> {
                closed[0] = true;
                Connection c = current;
                if (!c.isClosed() && !c.getAutoCommit()) {
                  c.rollback();
                  c.setAutoCommit(true);
                }
                return null;
              }
              case "isClosed" -> {
                return closed[0] || current.isClosed();
              }
              case "hashCode" -> {
                return System.identityHashCode(p);
              }
              case "equals" -> {
                return p == args[0];
              }
              default -> {
                try {
                  return m.invoke(current, args);
                } catch (InvocationTargetException e) {
                  throw e.getCause();
                }
              }
            }
          });
    }
  }
}
