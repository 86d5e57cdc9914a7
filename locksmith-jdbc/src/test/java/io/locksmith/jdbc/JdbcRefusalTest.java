package io.locksmith.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import io.locksmith.BackendConfigurationException;
import io.locksmith.BackendUnavailableException;
import io.locksmith.LockException;
import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.h2.H2Database;
import io.locksmith.testkit.mariadb.MariaDbServer;
import io.locksmith.testkit.postgres.PostgresServer;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 23, item 2: a statement the database refuses for a reason that will not pass is a typed error at
 * once, not an outage retried until the wait ends (and forever by {@code lock()}). Each acquisition
 * waits {@link #WAIT}; a refusal that is told apart from an outage fails well before it.
 */
class JdbcRefusalTest {
  @RegisterExtension
  static final SharedTopology<PostgresServer> PG = PostgresServer.shared();
  @RegisterExtension
  static final SharedTopology<MariaDbServer> MARIADB = MariaDbServer.shared();
  @RegisterExtension
  static final SharedTopology<H2Database> H2 = H2Database.shared();

  /** Long, since a passing case never waits it out: only a refusal retried as an outage runs into it. */
  private static final Duration WAIT = Duration.ofSeconds(30);
  /**
   * "At once", real time being what tells the two apart: one statement and its translation take
   * milliseconds; 10 s allows for a loaded 2-core host and is a third of WAIT.
   */
  private static final Duration AT_ONCE = Duration.ofSeconds(10);

  @Test
  void aMissingTableIsAConfigurationErrorAtOnceOnEveryDialect() throws Exception {
    missingTable(TestDatabases.pool(PG.get()), "refusal_pg_missing");
    missingTable(TestDatabases.pool(MARIADB.get()), "refusal_maria_missing");
    missingTable(TestDatabases.pool(H2.get()), "refusal_h2_missing");
  }

  private static void missingTable(DataSource pool, String table) throws Exception {
    try (JdbcLockClient client = JdbcLockClient.builder().dataSource(pool).table(table).createTableIfMissing()
        .build()) {
      execute(pool, "DROP TABLE " + table);
      long start = System.nanoTime();
      assertThatThrownBy(() -> client.lock("x").acquire(WAIT))
          .isInstanceOf(BackendConfigurationException.class)
          .satisfies(e -> assertThat(e.getMessage()).containsIgnoringCase(table));
      assertThat(Duration.ofNanos(System.nanoTime() - start)).as("at once, not after the wait").isLessThan(AT_ONCE);
    } finally {
      execute(pool, "DROP TABLE IF EXISTS " + table + "_permits");
      execute(pool, "DROP TABLE IF EXISTS " + table + "_waiters");
      execute(pool, "DROP TABLE IF EXISTS " + table + "_rw");
      execute(pool, "DROP SEQUENCE IF EXISTS " + table + "_token");
    }
  }

  /** A non-superuser role whose privilege on the table is revoked while the client runs. */
  @Test
  void aRevokedPermissionIsAConfigurationErrorAtOnceOnPostgres() throws Exception {
    DataSource admin = TestDatabases.pool(PG.get());
    String table = "refusal_pg_revoked";
    execute(admin, "DROP ROLE IF EXISTS refusal_app");
    execute(admin, "CREATE ROLE refusal_app LOGIN NOSUPERUSER");
    try (HikariDataSource app = TestDatabases.newPool(PG.get().jdbcUrl().replace("user=postgres", "user=refusal_app"),
        "refusal_app", 4)) {
      try (JdbcLockClient owner = JdbcLockClient.builder().dataSource(admin).table(table).createTableIfMissing()
          .build()) {
        execute(admin, "GRANT SELECT, INSERT, UPDATE, DELETE ON " + table + ", " + table + "_permits, " + table
            + "_waiters, " + table + "_rw TO refusal_app");
        execute(admin, "GRANT USAGE, SELECT, UPDATE ON SEQUENCE " + table + "_token TO refusal_app");
      }
      try (JdbcLockClient client = JdbcLockClient.builder().dataSource(app).table(table).build()) {
        client.lock("x").acquire(WAIT).release();
        execute(admin, "REVOKE UPDATE ON " + table + " FROM refusal_app");
        long start = System.nanoTime();
        assertThatThrownBy(() -> client.lock("x").acquire(WAIT))
            .isInstanceOf(BackendConfigurationException.class)
            .hasMessageContaining("permission");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).as("at once").isLessThan(AT_ONCE);
      }
    } finally {
      execute(admin, "DROP TABLE IF EXISTS " + table + ", " + table + "_permits, " + table + "_waiters, " + table
          + "_rw");
      execute(admin, "DROP SEQUENCE IF EXISTS " + table + "_token");
      execute(admin, "DROP ROLE IF EXISTS refusal_app");
    }
  }

  /** A check constraint refuses the row: neither a configuration problem nor an outage. */
  @Test
  void aRefusedStatementIsALockExceptionAtOnceOnEveryDialect() throws Exception {
    refused(TestDatabases.pool(PG.get()), "refusal_pg_check");
    refused(TestDatabases.pool(MARIADB.get()), "refusal_maria_check");
    refused(TestDatabases.pool(H2.get()), "refusal_h2_check");
  }

  private static void refused(DataSource pool, String table) throws Exception {
    try (JdbcLockClient client = JdbcLockClient.builder().dataSource(pool).table(table).createTableIfMissing()
        .build()) {
      execute(pool, "ALTER TABLE " + table + " ADD CONSTRAINT " + table + "_no_forbidden CHECK (lock_name <> 'forbidden')");
      long start = System.nanoTime();
      assertThatThrownBy(() -> client.lock("forbidden").acquire(WAIT))
          .isInstanceOf(LockException.class)
          .isNotInstanceOf(BackendUnavailableException.class)
          .isNotInstanceOf(BackendConfigurationException.class)
          .hasMessageContaining("refused");
      assertThat(Duration.ofNanos(System.nanoTime() - start)).as("at once").isLessThan(AT_ONCE);
      client.lock("allowed").acquire(WAIT).release();
    } finally {
      execute(pool, "DROP TABLE IF EXISTS " + table);
      execute(pool, "DROP TABLE IF EXISTS " + table + "_permits");
      execute(pool, "DROP TABLE IF EXISTS " + table + "_waiters");
      execute(pool, "DROP TABLE IF EXISTS " + table + "_rw");
      execute(pool, "DROP SEQUENCE IF EXISTS " + table + "_token");
    }
  }

  /**
   * The decided behaviour for a read-only server (a replica, or an old primary after a failover): an
   * outage, not a configuration error, because it usually passes (the pool reconnects to the new
   * primary); and the connection that met it is not given back to the pool, so the next attempt gets a
   * fresh one. The role's sessions are read-only until the "failover" resets it: old sessions stay
   * read-only (like connections still open to the old primary), new ones are writable.
   */
  @Test
  void aReadOnlyServerIsAnOutageAndItsConnectionIsNotReusedOnPostgres() throws Exception {
    DataSource admin = TestDatabases.pool(PG.get());
    String table = "refusal_pg_readonly";
    execute(admin, "DROP ROLE IF EXISTS refusal_ro");
    execute(admin, "CREATE ROLE refusal_ro LOGIN NOSUPERUSER");
    try (HikariDataSource app = TestDatabases.newPool(PG.get().jdbcUrl().replace("user=postgres", "user=refusal_ro"),
        "refusal_ro", 2)) { // one for LISTEN, one for the statements
      try (JdbcLockClient owner = JdbcLockClient.builder().dataSource(admin).table(table).createTableIfMissing()
          .build()) {
        execute(admin, "GRANT SELECT, INSERT, UPDATE, DELETE ON " + table + ", " + table + "_permits, " + table
            + "_waiters, " + table + "_rw TO refusal_ro");
        execute(admin, "GRANT USAGE, SELECT, UPDATE ON SEQUENCE " + table + "_token TO refusal_ro");
      }
      execute(admin, "ALTER ROLE refusal_ro SET default_transaction_read_only = on");
      try (JdbcLockClient client = JdbcLockClient.builder().dataSource(app).table(table).maxConcurrentStatements(1)
          .build()) {
        assertThatThrownBy(() -> client.lock("x").tryAcquire())
            .isInstanceOf(BackendUnavailableException.class)
            .hasMessageContaining("read-only");
        execute(admin, "ALTER ROLE refusal_ro RESET default_transaction_read_only"); // the failover is over
        assertThat(client.lock("x").tryAcquire()).as("granted on a fresh connection").isPresent();
      }
    } finally {
      execute(admin, "DROP TABLE IF EXISTS " + table + ", " + table + "_permits, " + table + "_waiters, " + table
          + "_rw");
      execute(admin, "DROP SEQUENCE IF EXISTS " + table + "_token");
      execute(admin, "DROP ROLE IF EXISTS refusal_ro");
    }
  }

  static void execute(DataSource ds, String statement) throws SQLException {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      s.execute(statement);
    }
  }
}
