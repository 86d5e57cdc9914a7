package io.locksmith.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.BackendConfigurationException;
import io.locksmith.ClientOptions;
import io.locksmith.FencingGuarantee;
import io.locksmith.Lease;
import io.locksmith.LockKind;
import io.locksmith.testkit.h2.H2Database;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Building a client: dialect, tables, settings; and the lock table's lazy take-over and purge. On H2. */
@Tag("unit")
class JdbcLockClientTest {
  private H2Database h2;
  private DataSource ds;

  @BeforeEach
  void start() {
    h2 = H2Database.inMemory();
    ds = h2.dataSource();
  }

  @AfterEach
  void stop() {
    h2.close();
  }

  @Test
  void aMissingTableFailsAtBuildNamingTheDdl() {
    assertThatThrownBy(() -> JdbcLockClient.builder().dataSource(ds).build())
        .isInstanceOf(BackendConfigurationException.class)
        .hasMessageContaining("locksmith_locks")
        .hasMessageContaining("JdbcLockClient.ddl(JdbcDialect.H2")
        .hasMessageContaining("createTableIfMissing()")
        .hasMessageContaining("CREATE TABLE IF NOT EXISTS locksmith_locks (");
  }

  @Test
  void aTableWithOtherColumnsFailsAtBuild() throws Exception {
    exec("CREATE TABLE locks (name VARCHAR(100) PRIMARY KEY, locked_by VARCHAR(100))");
    assertThatThrownBy(() -> JdbcLockClient.builder().dataSource(ds).table("locks").build())
        .isInstanceOf(BackendConfigurationException.class)
        .hasMessageContaining("'locks'")
        .hasMessageContaining("CREATE TABLE IF NOT EXISTS locks (");
  }

  @Test
  void aMissingSequenceFailsAtBuild() throws Exception {
    for (String ddl : JdbcDialect.H2.ddlStatements("locks")) {
      if (!ddl.startsWith("CREATE SEQUENCE")) {
        exec(ddl);
      }
    }
    assertThatThrownBy(() -> JdbcLockClient.builder().dataSource(ds).table("locks").build())
        .isInstanceOf(BackendConfigurationException.class).hasMessageContaining("no sequence");
  }

  @Test
  void createTableIfMissingIsIdempotentWorksInASchemaAndTheDialectIsDetected() throws Exception {
    exec("CREATE SCHEMA app");
    for (int i = 0; i < 2; i++) {
      try (JdbcLockClient client = JdbcLockClient.builder().dataSource(ds).table("app.locks_x")
          .createTableIfMissing().build()) {
        assertThat(client.dialect()).isEqualTo(JdbcDialect.H2);
        assertThat(client.table()).isEqualTo("app.locks_x");
        try (Lease lease = client.lock("x").acquire()) {
          assertThat(lease.fencingToken()).isPositive();
        }
      }
    }
  }

  @Test
  void theDdlIsShippedForEveryDialect() {
    for (JdbcDialect d : JdbcDialect.values()) {
      String ddl = JdbcLockClient.ddl(d, "my_locks");
      assertThat(ddl).contains("CREATE TABLE IF NOT EXISTS my_locks (", "my_locks_permits", "my_locks_token")
          .doesNotContain("${table}");
    }
    assertThat(JdbcLockClient.ddl(JdbcDialect.POSTGRESQL)).contains("locksmith_locks_waiters");
    assertThatThrownBy(() -> JdbcLockClient.ddl(JdbcDialect.H2, "x; DROP TABLE y"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void badSettingsAreRejectedAtBuild() {
    assertThatThrownBy(() -> JdbcLockClient.builder().build()).isInstanceOf(NullPointerException.class)
        .hasMessageContaining("dataSource");
    assertThatThrownBy(() -> JdbcLockClient.builder().dataSource(ds).table("a-b").build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("table");
    assertThatThrownBy(() -> JdbcLockClient.builder().dataSource(ds).commandTimeout(Duration.ZERO).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("commandTimeout");
    assertThatThrownBy(() -> JdbcLockClient.builder().dataSource(ds)
        .pollInterval(Duration.ofMillis(50), Duration.ofMillis(10)).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("pollInterval max");
    assertThatThrownBy(() -> JdbcLockClient.builder().dataSource(ds).maxConcurrentStatements(0).build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> JdbcLockClient.builder().dataSource(ds)
        .options(ClientOptions.builder().maxNameLength(513).build()).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("512");
  }

  @Test
  void capabilitiesSayWhatPasses() {
    try (JdbcLockClient client = JdbcLockClient.builder().dataSource(ds).createTableIfMissing().build()) {
      assertThat(client.capabilities().lockKinds()).containsExactlyInAnyOrder(LockKind.EXCLUSIVE, LockKind.FAIR,
          LockKind.READ_WRITE,
          LockKind.SEMAPHORE);
      assertThat(client.capabilities().fencing()).isEqualTo(FencingGuarantee.STRICT);
      assertThat(client.capabilities().waitsByNotification()).isFalse();
    }
    // a session-pinned lock has no queue: the pinned modes offer the exclusive lock only
    try (JdbcLockClient client = JdbcLockClient.builder().dataSource(ds).mode(JdbcLockMode.ROW_LOCK).build()) {
      assertThat(client.capabilities().lockKinds()).containsExactly(LockKind.EXCLUSIVE);
      assertThatThrownBy(() -> client.fairLock("x")).isInstanceOf(UnsupportedOperationException.class);
    }
    // the pinned modes have no read-write lock (docs/jdbc.md, "Why only in lease mode")
    try (JdbcLockClient pinned = JdbcLockClient.builder().dataSource(ds).mode(JdbcLockMode.ROW_LOCK)
        .createTableIfMissing().build()) {
      assertThat(pinned.capabilities().lockKinds()).doesNotContain(LockKind.READ_WRITE);
      assertThatThrownBy(() -> pinned.readWriteLock("x")).isInstanceOf(UnsupportedOperationException.class);
    }
  }

  /**
   * A table made before the fair lock (MariaDB's and H2's DDL had no waiters table) is refused at build,
   * naming the DDL, like any missing companion; createTableIfMissing() adds only the waiters table.
   */
  @Test
  void aTableWithoutItsWaitersTableIsRefusedAtBuildAndCreatedOnRequest() throws Exception {
    JdbcLockClient.builder().dataSource(ds).createTableIfMissing().build().close();
    exec("DROP TABLE locksmith_locks_waiters");
    assertThatThrownBy(() -> JdbcLockClient.builder().dataSource(ds).build())
        .isInstanceOf(BackendConfigurationException.class)
        .hasMessageContaining("CREATE TABLE IF NOT EXISTS locksmith_locks_waiters (");
    try (JdbcLockClient client = JdbcLockClient.builder().dataSource(ds).createTableIfMissing().build()) {
      try (Lease fair = client.fairLock("x").acquire()) {
        assertThat(fair.fencingToken()).isPositive();
      }
    }
  }

  /** The seed's race: many clients insert the first row of a name at once; one wins, none fails. */
  @Test
  void concurrentFirstGrantsOfANewNameGrantExactlyOnceAndNeverFail() throws Exception {
    List<JdbcLockClient> clients = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      clients.add(JdbcLockClient.builder().dataSource(ds).createTableIfMissing().build());
    }
    ExecutorService pool = Executors.newFixedThreadPool(6);
    try {
      for (int round = 0; round < 40; round++) {
        String name = "race-" + (round / 2); // odd rounds: the row exists, free
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Optional<Lease>>> attempts = new ArrayList<>();
        for (JdbcLockClient c : clients) {
          attempts.add(pool.submit(() -> {
            go.await();
            return c.lock(name).tryAcquire();
          }));
        }
        go.countDown();
        List<Lease> granted = new ArrayList<>();
        for (Future<Optional<Lease>> f : attempts) {
          f.get().ifPresent(granted::add); // released only after every attempt answered
        }
        assertThat(granted).as("grants of " + name).hasSize(1);
        granted.forEach(Lease::release);
      }
    } finally {
      pool.shutdownNow();
      clients.forEach(JdbcLockClient::close);
    }
  }

  @Test
  void purgeDeletesEndedRowsAndTokensStillIncreaseAfterwards() throws Exception {
    try (JdbcLockClient client = JdbcLockClient.builder().dataSource(ds).createTableIfMissing().build()) {
      long first;
      try (Lease lease = client.lock("purged").acquire()) {
        first = lease.fencingToken();
      }
      client.lock("kept").acquire();
      assertThat(rows()).isEqualTo(2);
      assertThat(client.purgeExpired()).as("within the grace period nothing goes").isZero();
      assertThat(client.backend().purgeExpired(Duration.ZERO).join()).isEqualTo(1);
      assertThat(rows()).as("the held lock's row stays").isEqualTo(1);
      try (Lease again = client.lock("purged").acquire()) {
        assertThat(again.fencingToken()).isGreaterThan(first);
      }
    }
  }

  private int rows() throws Exception {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement();
        var rs = s.executeQuery("SELECT COUNT(*) FROM locksmith_locks")) {
      rs.next();
      return rs.getInt(1);
    }
  }

  private void exec(String sql) throws Exception {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }
}
