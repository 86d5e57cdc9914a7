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
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 23, item 4: fencing tokens must not trust the sequence blindly. A PostgreSQL sequence with
 * {@code CACHE} above 1 hands each session its own block of values, so one name's tokens go backwards
 * across clients: {@code build()} refuses it (and a cycling or decreasing one) and says how to fix it.
 * And the grant itself never writes a token at or below the one in the row, even when the sequence is
 * set back behind it (a restore, a careless {@code setval}).
 */
class JdbcTokenSequenceTest {
  @RegisterExtension
  static final SharedTopology<PostgresServer> PG = PostgresServer.shared();
  @RegisterExtension
  static final SharedTopology<MariaDbServer> MARIADB = MariaDbServer.shared();
  @RegisterExtension
  static final SharedTopology<H2Database> H2 = H2Database.shared();

  @Test
  void aPostgresSequenceWithACachePerSessionIsRefusedAtBuild() throws Exception {
    DataSource pool = TestDatabases.pool(PG.get());
    String table = "seq_pg_cached";
    try {
      JdbcLockClient.builder().dataSource(pool).table(table).createTableIfMissing().build().close();
      execute(pool, "ALTER SEQUENCE " + table + "_token CACHE 20");
      assertThatThrownBy(() -> JdbcLockClient.builder().dataSource(pool).table(table).build())
          .isInstanceOf(BackendConfigurationException.class)
          .hasMessageContaining(table + "_token")
          .hasMessageContaining("CACHE 1");
      execute(pool, "ALTER SEQUENCE " + table + "_token CACHE 1 INCREMENT BY -1");
      assertThatThrownBy(() -> JdbcLockClient.builder().dataSource(pool).table(table).build())
          .isInstanceOf(BackendConfigurationException.class)
          .hasMessageContaining("INCREMENT BY 1");
      execute(pool, "ALTER SEQUENCE " + table + "_token INCREMENT BY 1 CYCLE");
      assertThatThrownBy(() -> JdbcLockClient.builder().dataSource(pool).table(table).build())
          .isInstanceOf(BackendConfigurationException.class)
          .hasMessageContaining("NO CYCLE");
      execute(pool, "ALTER SEQUENCE " + table + "_token NO CYCLE");
      JdbcLockClient.builder().dataSource(pool).table(table).build().close();
    } finally {
      drop(pool, table);
    }
  }

  @Test
  void aCyclingSequenceIsRefusedAtBuildOnMariaDbAndH2() throws Exception {
    refusedWhenCycling(TestDatabases.pool(MARIADB.get()), "seq_maria_cycle");
    refusedWhenCycling(TestDatabases.pool(H2.get()), "seq_h2_cycle");
  }

  private static void refusedWhenCycling(DataSource pool, String table) throws Exception {
    try {
      JdbcLockClient.builder().dataSource(pool).table(table).createTableIfMissing().build().close();
      execute(pool, "ALTER SEQUENCE " + table + "_token CYCLE");
      assertThatThrownBy(() -> JdbcLockClient.builder().dataSource(pool).table(table).build())
          .isInstanceOf(BackendConfigurationException.class)
          .hasMessageContaining("NO CYCLE");
    } finally {
      drop(pool, table);
    }
  }

  @Test
  void aGrantNeverWritesATokenAtOrBelowTheRowsOnPostgres() throws Exception {
    tokensKeepIncreasing(TestDatabases.pool(PG.get()), "seq_pg_back");
  }

  @Test
  void aGrantNeverWritesATokenAtOrBelowTheRowsOnMariaDb() throws Exception {
    tokensKeepIncreasing(TestDatabases.pool(MARIADB.get()), "seq_maria_back");
  }

  @Test
  void aGrantNeverWritesATokenAtOrBelowTheRowsOnH2() throws Exception {
    tokensKeepIncreasing(TestDatabases.pool(H2.get()), "seq_h2_back");
  }

  @Test
  void aRowLockGrantNeverRecordsATokenAtOrBelowTheRowsOnH2() throws Exception {
    tokensKeepIncreasing(TestDatabases.pool(H2.get()), "seq_h2_rowlock", JdbcLockMode.ROW_LOCK);
  }

  private static void tokensKeepIncreasing(DataSource pool, String table) throws Exception {
    tokensKeepIncreasing(pool, table, JdbcLockMode.LEASE);
  }

  private static void tokensKeepIncreasing(DataSource pool, String table, JdbcLockMode mode) throws Exception {
    try (JdbcLockClient a = JdbcLockClient.builder().dataSource(pool).table(table).mode(mode).createTableIfMissing()
        .build();
        JdbcLockClient b = JdbcLockClient.builder().dataSource(pool).table(table).mode(mode).build()) {
      long last = 0;
      for (int i = 0; i < 5; i++) {
        try (Lease lease = (i % 2 == 0 ? a : b).lock("job").acquire()) {
          assertThat(lease.fencingToken()).isGreaterThan(last);
          last = lease.fencingToken();
        }
      }
      execute(pool, "ALTER SEQUENCE " + table + "_token RESTART WITH 1"); // behind the row's token
      for (int i = 0; i < 4; i++) {
        try (Lease lease = (i % 2 == 0 ? b : a).lock("job").acquire()) {
          assertThat(lease.fencingToken()).as("grant %d after the sequence went back", i).isGreaterThan(last);
          last = lease.fencingToken();
        }
      }
    } finally {
      drop(pool, table);
    }
  }

  private static void drop(DataSource pool, String table) throws SQLException {
    execute(pool, "DROP TABLE IF EXISTS " + table);
    execute(pool, "DROP TABLE IF EXISTS " + table + "_permits");
    execute(pool, "DROP TABLE IF EXISTS " + table + "_waiters");
    execute(pool, "DROP SEQUENCE IF EXISTS " + table + "_token");
  }
}
