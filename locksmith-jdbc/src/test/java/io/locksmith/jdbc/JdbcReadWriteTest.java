package io.locksmith.jdbc;

import static io.locksmith.tck.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.Lease;
import io.locksmith.LockOptions;
import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.h2.H2Database;
import io.locksmith.testkit.postgres.PostgresServer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What is particular to the JDBC read-write lock beyond {@code WriteLockTck}: on PostgreSQL the wake-ups
 * of each side reach another client by notification (kind letters {@code R} and {@code W}), not at the
 * waiters' re-check; on H2 a waiting writer that died gives up its place by itself.
 */
class JdbcReadWriteTest {
  @RegisterExtension
  static final SharedTopology<PostgresServer> PG = PostgresServer.shared();
  @RegisterExtension
  static final SharedTopology<H2Database> H2 = H2Database.shared();

  private static final LockOptions LONG = LockOptions.watched(Duration.ofSeconds(30));
  private final List<JdbcLockClient> clients = new ArrayList<>();

  private JdbcLockClient client(DataSource dataSource) {
    JdbcLockClient c = JdbcLockClient.builder().dataSource(dataSource).waiterRecheck(Duration.ofMinutes(1))
        .createTableIfMissing().build();
    clients.add(c);
    return c;
  }

  @AfterEach
  void close() {
    clients.forEach(JdbcLockClient::close);
  }

  /**
   * The waiters' backstop is at least the holder's 30 s lease here (their re-check is a minute), so
   * grants within 5 s of each release can only come from its notifications: a write release wakes every
   * waiting reader of two other clients ({@code R}), and the last read release the waiting writer
   * ({@code W}).
   */
  @Test
  void eachSidesWakeUpsReachOtherClientsByNotification() throws Exception {
    DataSource pool = TestDatabases.pool(PG.get());
    JdbcLockClient a = client(pool);
    JdbcLockClient b = client(pool);
    JdbcLockClient c = client(pool);
    String name = "rw-wake/" + System.nanoTime();
    Lease write = a.readWriteLock(name, LONG).writeLock().acquire();
    List<CompletableFuture<Lease>> readers = new ArrayList<>();
    for (JdbcLockClient reader : List.of(b, c, b)) {
      readers.add(reader.readWriteLock(name, LONG).readLock().acquireAsync(Duration.ofSeconds(50))
          .toCompletableFuture());
    }
    assertThat(eventually(Duration.ofSeconds(10), () -> waiters(a, name) == 3)).as("3 readers wait").isTrue();
    write.release();
    List<Lease> reads = new ArrayList<>();
    for (CompletableFuture<Lease> r : readers) {
      reads.add(r.get(5, TimeUnit.SECONDS));
    }
    assertThat(reads).allSatisfy(r -> assertThat(r.fencingToken()).isEqualTo(write.fencingToken()));

    CompletableFuture<Lease> writer = a.readWriteLock(name, LONG).writeLock().acquireAsync(Duration.ofSeconds(50))
        .toCompletableFuture();
    assertThat(eventually(Duration.ofSeconds(10), () -> waiters(a, name) == 1)).as("the writer waits").isTrue();
    reads.get(0).release();
    reads.get(1).release();
    assertThat(writer).as("a reader still holds").isNotDone();
    reads.get(2).release();
    Lease next = writer.get(5, TimeUnit.SECONDS);
    assertThat(next.fencingToken()).isGreaterThan(write.fencingToken());
    next.release();
  }

  /**
   * A waiting writer keeps new readers out only while its registration lives: one that died (here a row
   * whose waiter never comes back) gives up its place when its deadline passes by the database clock, and
   * readers enter again. The row is written with a deadline a minute away, so that the refusal is seen
   * however slow the machine, then brought to 300 ms from now, as if that minute had passed.
   */
  @Test
  void aDeadWaitingWritersPlaceExpires() throws Exception {
    DataSource h2 = TestDatabases.pool(H2.get());
    JdbcLockClient a = client(h2);
    String name = "rw-dead/" + System.nanoTime();
    a.readWriteLock(name).readLock().tryAcquire().orElseThrow().release(); // creates the writer's row
    Sql sql = new Sql(JdbcDialect.H2, JdbcLockClient.DEFAULT_TABLE);
    String table = new ReadWriteSql(sql).table;
    update(h2, "INSERT INTO " + table + " (namespace, lock_name, member_id, member_kind, since, expires_at)"
        + " VALUES (?, ?, 'gone:waiter', 'w', " + sql.now + ", " + sql.now + " + 60000)", a, name);
    assertThat(a.readWriteLock(name).readLock().inspect()).isEmpty();
    assertThat(a.readWriteLock(name).readLock().tryAcquire()).as("a new reader while a writer waits").isEmpty();
    assertThat(a.readWriteLock(name).writeLock().inspect()).isEmpty();
    update(h2, "UPDATE " + table + " SET expires_at = " + sql.now + " + 300 WHERE namespace = ? AND lock_name = ?",
        a, name);
    // 300 ms by the database clock; 10 s only bounds the wait on a loaded machine
    Optional<Lease>[] entered = new Optional[] {Optional.empty()};
    assertThat(eventually(Duration.ofSeconds(10), () -> {
      entered[0] = a.readWriteLock(name).readLock().tryAcquire();
      return entered[0].isPresent();
    })).as("readers enter once the dead writer's registration ended").isTrue();
    entered[0].get().release();
    assertThat(a.readWriteLock(name).writeLock().tryAcquire()).as("and writers").isPresent();
  }

  private static void update(DataSource ds, String statement, JdbcLockClient client, String name)
      throws java.sql.SQLException {
    try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(statement)) {
      ps.setString(1, client.options().namespace());
      ps.setString(2, name);
      assertThat(ps.executeUpdate()).isEqualTo(1);
    }
  }

  private static int waiters(JdbcLockClient client, String name) {
    Optional<io.locksmith.LockInfo> w = client.readWriteLock(name).writeLock().inspect();
    return (w.isPresent() ? w : client.readWriteLock(name).readLock().inspect()).map(i -> i.waiters()).orElse(-1);
  }
}
