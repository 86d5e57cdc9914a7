package io.locksmith.jdbc;

import static io.locksmith.jdbc.JdbcRefusalTest.execute;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.BackendConfigurationException;
import io.locksmith.Lease;
import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.h2.H2Database;
import io.locksmith.testkit.mariadb.MariaDbServer;
import io.locksmith.testkit.postgres.PostgresServer;
import java.sql.SQLException;
import java.util.Optional;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 23, items 5 and 7: {@code build()} checks more than the columns. On MariaDB the shipped table
 * compares names exactly ({@code 'job'} and {@code 'job '} are two locks), and a table whose name column
 * pads or ignores case is refused; a table without its primary key is refused; H2's sequence is looked up
 * in the table's schema, not anywhere.
 */
class JdbcTableCheckTest {
  @RegisterExtension
  static final SharedTopology<PostgresServer> PG = PostgresServer.shared();
  @RegisterExtension
  static final SharedTopology<MariaDbServer> MARIADB = MariaDbServer.shared();
  @RegisterExtension
  static final SharedTopology<H2Database> H2 = H2Database.shared();

  @Test
  void onMariaDbATrailingSpaceMakesAnotherLock() throws Exception {
    DataSource pool = TestDatabases.pool(MARIADB.get());
    String table = "check_maria_pad";
    try (JdbcLockClient a = JdbcLockClient.builder().dataSource(pool).table(table).createTableIfMissing().build();
        JdbcLockClient b = JdbcLockClient.builder().dataSource(pool).table(table).build();
        Lease job = a.lock("job").acquire()) {
      Optional<Lease> padded = b.lock("job ").tryAcquire();
      assertThat(padded).as("'job ' is not 'job'").isPresent();
      assertThat(padded.get().fencingToken()).isNotEqualTo(job.fencingToken());
      padded.get().release();
      assertThat(b.lock("Job").tryAcquire()).as("'Job' is not 'job'").isPresent();
    } finally {
      drop(pool, table);
    }
  }

  @Test
  void onMariaDbATableWhoseNamesPadOrIgnoreCaseIsRefused() throws Exception {
    DataSource pool = TestDatabases.pool(MARIADB.get());
    for (String collation : new String[] {"utf8mb4_bin", "utf8mb4_general_ci", "utf8mb4_general_nopad_ci"}) {
      String table = "check_maria_" + collation.replace("utf8mb4_", "");
      try {
        for (String ddl : JdbcDialect.MARIADB.ddlStatements(table)) {
          execute(pool, ddl.replace("utf8mb4_nopad_bin", collation));
        }
        assertThatThrownBy(() -> JdbcLockClient.builder().dataSource(pool).table(table).build())
            .as(collation)
            .isInstanceOf(BackendConfigurationException.class)
            .hasMessageContaining("lock_name (" + collation + ")")
            .hasMessageContaining("COLLATE utf8mb4_nopad_bin");
      } finally {
        drop(pool, table);
      }
    }
  }

  @Test
  void onH2ACaseInsensitiveNameColumnIsRefused() throws Exception {
    DataSource h2 = TestDatabases.pool(H2.get());
    String table = "check_h2_ignorecase";
    try {
      for (String ddl : JdbcDialect.H2.ddlStatements(table)) {
        execute(h2, ddl.replace("lock_name  VARCHAR(1024)", "lock_name  VARCHAR_IGNORECASE(1024)"));
      }
      assertThatThrownBy(() -> JdbcLockClient.builder().dataSource(h2).table(table).build())
          .isInstanceOf(BackendConfigurationException.class)
          .hasMessageContaining("lock_name (VARCHAR_IGNORECASE)");
    } finally {
      drop(h2, table);
    }
  }

  @Test
  void aTableWithoutItsPrimaryKeyIsRefused() throws Exception {
    DataSource h2 = TestDatabases.pool(H2.get());
    String table = "check_h2_nokey";
    try {
      for (String ddl : JdbcDialect.H2.ddlStatements(table)) {
        execute(h2, ddl.replace(",\n  PRIMARY KEY (namespace, kind, lock_name)", ""));
      }
      assertThatThrownBy(() -> JdbcLockClient.builder().dataSource(h2).table(table).build())
          .isInstanceOf(BackendConfigurationException.class)
          .hasMessageContaining("primary key of " + table + " is missing")
          .hasMessageContaining("ADD PRIMARY KEY (namespace, kind, lock_name)");
    } finally {
      drop(h2, table);
    }
    DataSource pg = TestDatabases.pool(PG.get());
    String pgTable = "check_pg_shortkey";
    try {
      for (String ddl : JdbcDialect.POSTGRESQL.ddlStatements(pgTable)) {
        execute(pg, ddl.replace("PRIMARY KEY (namespace, kind, lock_name)\n)", "PRIMARY KEY (lock_name)\n)"));
      }
      assertThatThrownBy(() -> JdbcLockClient.builder().dataSource(pg).table(pgTable).build())
          .isInstanceOf(BackendConfigurationException.class)
          .hasMessageContaining("primary key of " + pgTable + " is [lock_name]");
    } finally {
      drop(pg, pgTable);
    }
  }

  /** The tables in schema OTHER, a sequence of the same name only in PUBLIC: the probe must not take it. */
  @Test
  void onH2TheSequenceIsLookedUpInTheTablesSchema() throws Exception {
    DataSource h2 = TestDatabases.pool(H2.get());
    String table = "check_other.locks";
    try {
      execute(h2, "CREATE SCHEMA IF NOT EXISTS check_other");
      for (String ddl : JdbcDialect.H2.ddlStatements(table)) {
        if (!ddl.startsWith("CREATE SEQUENCE")) {
          execute(h2, ddl);
        }
      }
      execute(h2, "CREATE SEQUENCE IF NOT EXISTS locks_token");
      assertThatThrownBy(() -> JdbcLockClient.builder().dataSource(h2).table(table).build())
          .isInstanceOf(BackendConfigurationException.class)
          .hasMessageContaining("check_other.locks_token");
    } finally {
      execute(h2, "DROP SCHEMA IF EXISTS check_other CASCADE");
      execute(h2, "DROP SEQUENCE IF EXISTS locks_token");
    }
  }

  private static void drop(DataSource pool, String table) throws SQLException {
    execute(pool, "DROP TABLE IF EXISTS " + table);
    execute(pool, "DROP TABLE IF EXISTS " + table + "_permits");
    execute(pool, "DROP TABLE IF EXISTS " + table + "_waiters");
    execute(pool, "DROP SEQUENCE IF EXISTS " + table + "_token");
  }
}
