package io.locksmith.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.ClientOptions;
import io.locksmith.spi.AcquireMode;
import io.locksmith.spi.AcquireReply;
import io.locksmith.spi.RenewRequest;
import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.h2.H2Database;
import io.locksmith.testkit.mariadb.MariaDbServer;
import io.locksmith.testkit.postgres.PostgresServer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Writes of the read-write and fair locks that must not act on what their transaction read earlier
 * when another session changes it meanwhile: a {@link StatementHook} runs that session's work exactly
 * before the statement in question, on real PostgreSQL, MariaDB and H2 servers (PostgreSQL's
 * {@code clock_timestamp()} and MariaDB's {@code UTC_TIMESTAMP(6)} move between the statements of one
 * transaction; H2's clock does not). Each test works in a namespace of its own.
 */
class JdbcStaleStateTest {
  @RegisterExtension
  static final SharedTopology<PostgresServer> PG = PostgresServer.shared();
  @RegisterExtension
  static final SharedTopology<MariaDbServer> MARIADB = MariaDbServer.shared();
  @RegisterExtension
  static final SharedTopology<H2Database> H2 = H2Database.shared();

  private static final long LEASE = 30_000;
  private final String namespace = "st" + UUID.randomUUID().toString().substring(0, 8);
  private final List<JdbcLockClient> clients = new ArrayList<>();

  @AfterEach
  void close() {
    clients.forEach(JdbcLockClient::close);
  }

  private static DataSource pool(String database) {
    return switch (database) {
      case "postgresql" -> TestDatabases.pool(PG.get());
      case "mariadb" -> TestDatabases.pool(MARIADB.get());
      default -> TestDatabases.pool(H2.get());
    };
  }

  private JdbcLockClient client(DataSource ds) {
    JdbcLockClient c = JdbcLockClient.builder().dataSource(ds).createTableIfMissing()
        .options(ClientOptions.builder().namespace(namespace).build()).build();
    clients.add(c);
    return c;
  }

  private static <T> T join(java.util.concurrent.CompletionStage<T> stage) {
    return stage.toCompletableFuture().join();
  }

  /**
   * A reader with two holds releases one; just before that release writes the reader's row, a renewal
   * of the reader on another connection commits a later lease end (it does not lock the writer's row, so
   * nothing orders it after the release). The renewal told the client its lease was extended: the row
   * must keep that lease end, not the one the release read before the renewal.
   */
  @ParameterizedTest
  @ValueSource(strings = {"postgresql", "mariadb", "h2"})
  void aReadersPartialReleaseKeepsARenewalThatCommittedMeanwhile(String database) throws Exception {
    DataSource pool = pool(database);
    StatementHook hook = new StatementHook(pool);
    JdbcLockClient a = client(hook);
    JdbcReadWriteOps rw = a.backend().readWrite();
    String name = "partial", owner = "reader-1";
    assertThat(join(rw.read().acquire(name, owner, LEASE, AcquireMode.NEW, null)).granted()).isTrue();
    assertThat(join(rw.read().acquire(name, owner, LEASE, AcquireMode.REENTER, null)).holdCount()).isEqualTo(2);
    long before = readerExpiry(pool, rw, name, owner);
    long[] renewed = {0};
    hook.before(s -> s.startsWith("UPDATE " + rw.sql.table + " SET holds"), () -> {
      try (Connection c = pool.getConnection(); PreparedStatement ps = c.prepareStatement(rw.sql.readerRenew)) {
        ps.setQueryTimeout(10); // the release must not hold a lock that blocks a reader's renewal
        ps.setLong(1, 10 * LEASE); // well past the lease end the release read, whatever the clock did
        ps.setString(2, namespace);
        ps.setString(3, name);
        ps.setString(4, owner);
        assertThat(ps.executeUpdate()).as("the renewal").isEqualTo(1);
      }
      renewed[0] = readerExpiry(pool, rw, name, owner);
    });
    assertThat(join(rw.read().release(name, owner, false))).as("holds left").isEqualTo(1);
    assertThat(hook.ran()).as("the renewal ran inside the release").isEqualTo(1);
    assertThat(renewed[0]).isGreaterThan(before);
    assertThat(readerExpiry(pool, rw, name, owner)).as("the reader's lease end after the partial release")
        .isEqualTo(renewed[0]);
  }

  /**
   * A writer's lease runs out (here its row's lease end is put in the past: the writer was not renewed),
   * and a reader enters. If the database clock then steps back (here: the row's lease end is put back in
   * the future), the expired writer must still be refused its renewal and its re-entry while the reader
   * holds: the reader's entry ended the write hold for good.
   */
  @ParameterizedTest
  @ValueSource(strings = {"postgresql", "mariadb", "h2"})
  void anExpiredWriterCannotComeBackAfterReadersEntered(String database) throws Exception {
    DataSource pool = pool(database);
    JdbcLockClient a = client(pool);
    JdbcReadWriteOps rw = a.backend().readWrite();
    String now = a.backend().sql.now;
    String name = "expired-writer", writer = "writer-1";
    assertThat(join(rw.write().acquire(name, writer, LEASE, AcquireMode.NEW, null)).granted()).isTrue();
    writerExpiry(pool, name, now + " - 1"); // the lease ran out
    assertThat(join(rw.read().acquire(name, "reader-1", LEASE, AcquireMode.NEW, null)).granted())
        .as("a reader enters after the write lease ended").isTrue();
    writerExpiry(pool, name, now + " + 60000"); // the database clock steps back by more than the gap
    assertThat(join(rw.write().renew(List.of(new RenewRequest(name, writer, LEASE)))))
        .as("the expired writer's renewal while a reader holds").containsExactly(false);
    assertThat(join(rw.write().acquire(name, writer, LEASE, AcquireMode.REENTER, null)).granted())
        .as("the expired writer's re-entry while a reader holds").isFalse();
  }

  /**
   * A waiter asks again while the fair lock is held; its place expires by the database clock between the
   * statement that drops expired places and the one that keeps its place (PostgreSQL's clock moves
   * between them). The attempt must end in a normal refusal with the waiter queued, not in an error.
   */
  @ParameterizedTest
  @ValueSource(strings = {"postgresql", "mariadb", "h2"})
  void aPlaceExpiringDuringAnAttemptIsKeptNotDuplicated(String database) throws Exception {
    DataSource pool = pool(database);
    StatementHook hook = new StatementHook(pool);
    JdbcLockClient a = client(hook);
    JdbcFairOps fair = a.backend().fair;
    Sql sql = a.backend().sql;
    String name = "fair-expiring";
    assertThat(join(fair.acquire(name, "holder", LEASE, AcquireMode.NEW, null)).granted()).isTrue();
    assertThat(join(fair.acquire(name, "waiter", LEASE, AcquireMode.NEW, "w1")).granted()).isFalse();
    hook.before(s -> s.startsWith("UPDATE " + sql.waitersTable + " SET expires_at"), () -> {
      try (Connection c = pool.getConnection()) {
        long t = dbNow(c, sql);
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + sql.waitersTable + " SET expires_at = ?"
            + " WHERE namespace = ? AND kind = 'F' AND lock_name = ? AND waiter_id = 'w1'")) {
          ps.setLong(1, t + 1);
          ps.setString(2, namespace);
          ps.setString(3, name);
          assertThat(ps.executeUpdate()).isEqualTo(1);
        }
        // until the database clock is past the place's end: a poll with a failure deadline, not a pace
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (dbNow(c, sql) <= t + 1) {
          assertThat(System.nanoTime()).as("the database clock moves").isLessThan(deadline);
        }
      }
    });
    AcquireReply again = join(fair.acquire(name, "waiter", LEASE, AcquireMode.NEW, "w1"));
    assertThat(hook.ran()).as("the place expired inside the attempt").isEqualTo(1);
    assertThat(again.granted()).as("refused while the lock is held").isFalse();
    assertThat(join(fair.inspect(name)).orElseThrow().waiters()).as("the waiter is queued").isEqualTo(1);
  }

  private static long dbNow(Connection c, Sql sql) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT " + sql.now); ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private long readerExpiry(DataSource ds, JdbcReadWriteOps rw, String name, String owner) throws SQLException {
    try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement("SELECT expires_at FROM "
        + rw.sql.table + " WHERE namespace = ? AND lock_name = ? AND member_id = ? AND member_kind = 'R'")) {
      ps.setString(1, namespace);
      ps.setString(2, name);
      ps.setString(3, owner);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).as("the reader's row").isTrue();
        return rs.getLong(1);
      }
    }
  }

  private void writerExpiry(DataSource ds, String name, String expression) throws SQLException {
    try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement("UPDATE "
        + JdbcLockClient.DEFAULT_TABLE + " SET expires_at = " + expression
        + " WHERE namespace = ? AND kind = 'W' AND lock_name = ?")) {
      ps.setString(1, namespace);
      ps.setString(2, name);
      assertThat(ps.executeUpdate()).isEqualTo(1);
    }
  }
}
