package io.locksmith.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.BackendUnavailableException;
import io.locksmith.Lease;
import io.locksmith.LockOptions;
import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.mariadb.MariaDbServer;
import io.locksmith.testkit.postgres.PostgresServer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 23 items 3, 8 and 11: the scheduled purge never holds up the timer that fires every call's
 * deadline; its grace outlasts the longest command timeout; semaphore meta rows and row-lock rows are
 * purged too.
 */
class JdbcPurgeTest {
  @RegisterExtension
  static final SharedTopology<PostgresServer> PG = PostgresServer.shared();
  @RegisterExtension
  static final SharedTopology<MariaDbServer> MARIADB = MariaDbServer.shared();

  @Test
  void theGraceOutlastsTheLongestCommandTimeout() {
    // a grant statement blocked on a row waits at most one command timeout; the row must outlive that
    assertThat(JdbcLockClient.PURGE_GRACE).isGreaterThan(JdbcLockClient.MAX_COMMAND_TIMEOUT);
  }

  /**
   * A pool that has stopped handing out connections holds up the scheduled purge; a call meanwhile
   * still fails at its command timeout instead of waiting for the purge.
   */
  @Test
  void aPurgeStuckInTheCallsPoolDoesNotStopTimeouts() throws Exception {
    StalledPool pool = new StalledPool(TestDatabases.pool(PG.get()));
    Duration timeout = Duration.ofMillis(300);
    try (JdbcLockClient client = JdbcLockClient.builder().dataSource(pool)
        .listenerDataSource(TestDatabases.pool(PG.get())).commandTimeout(timeout).purgeEvery(Duration.ofSeconds(1))
        .createTableIfMissing().build()) {
      pool.stall();
      try {
        // the first purge (1 s after the start) is now waiting for a connection
        assertThat(pool.awaitWaiting(10_000)).as("the scheduled purge asked the pool").isTrue();
        CompletableFuture<Optional<Lease>> attempt = CompletableFuture.supplyAsync(() -> client.lock("stalled").tryAcquire());
        // its own deadline is 300 ms away; 5 s is for a loaded host, far below "never" (before the fix the
        // timer thread waited in the purge for as long as the pool stalled)
        assertThatThrownBy(() -> attempt.get(5, TimeUnit.SECONDS))
            .as("tryAcquire still times out while a purge waits for the pool")
            .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(BackendUnavailableException.class);
      } finally {
        pool.resume();
      }
    }
  }

  @Test
  void postgresSemaphoreRowsArePurgedUnlessTheirCountWasSet() throws Exception {
    semaphoreRows(TestDatabases.pool(PG.get()));
  }

  @Test
  void mariaDbSemaphoreRowsArePurgedUnlessTheirCountWasSet() throws Exception {
    semaphoreRows(TestDatabases.pool(MARIADB.get()));
  }

  private void semaphoreRows(DataSource ds) throws Exception {
    String used = "purge-sem-" + UUID.randomUUID();
    String set = "purge-sem-set-" + UUID.randomUUID();
    try (JdbcLockClient client = JdbcLockClient.builder().dataSource(ds).createTableIfMissing().build()) {
      client.semaphore(used, 2).acquire().release();
      client.semaphore(set, 2).setPermits(5);
      try (Lease held = client.semaphore(set, 2).acquire()) {
        assertThat(rows(ds, 'S', used)).isOne();
        client.purgeExpired();
        assertThat(rows(ds, 'S', used)).as("the meta row of a semaphore without permits is purged").isZero();
        assertThat(rows(ds, 'S', set)).as("a count set by setPermits is kept").isOne();
      }
      // the purged semaphore works as before, with its declared count
      try (Lease a = client.semaphore(used, 2).acquire(); Lease b = client.semaphore(used, 2).acquire()) {
        assertThat(client.semaphore(used, 2).tryAcquire()).isEmpty();
      }
      assertThat(client.semaphore(set, 2).describe().permits()).isEqualTo(5);
    }
  }

  @Test
  void postgresRowLockRowsArePurgedUnlessHeld() throws Exception {
    rowLockRows(TestDatabases.pool(PG.get()));
  }

  @Test
  void mariaDbRowLockRowsArePurgedUnlessHeld() throws Exception {
    rowLockRows(TestDatabases.pool(MARIADB.get()));
  }

  private void rowLockRows(DataSource ds) throws Exception {
    String free = "purge-row-" + UUID.randomUUID();
    String held = "purge-row-held-" + UUID.randomUUID();
    try (JdbcLockClient client = JdbcLockClient.builder().dataSource(ds).mode(JdbcLockMode.ROW_LOCK)
            .createTableIfMissing().build();
        JdbcLockClient other = JdbcLockClient.builder().dataSource(ds).mode(JdbcLockMode.ROW_LOCK).build()) {
      client.lock(free).acquire().release();
      try (Lease lease = client.lock(held).acquire()) {
        assertThat(rows(ds, 'R', free)).isOne();
        assertThat(other.purgeExpired()).as("rows deleted").isPositive();
        assertThat(rows(ds, 'R', free)).as("a row no session holds locked is purged").isZero();
        assertThat(rows(ds, 'R', held)).as("a held lock's row is skipped").isOne();
        assertThat(lease.isHeld()).isTrue();
        assertThat(other.lock(held).tryAcquire()).as("the held lock stays held").isEmpty();
      }
      try (Lease again = other.lock(free).acquire(Duration.ofSeconds(5))) {
        assertThat(again.isHeld()).as("a purged name is locked as before").isTrue();
      }
    }
  }

  /**
   * Review of issue 28: the purge deleted read-write members the moment their lease ended (grace 0), while a
   * read-write transaction judges its members by the clock it read at its start: a row it saw live could
   * be deleted under it, and its update then touched nothing while its caller was answered. Members now
   * get the purge's grace, as the lock rows do.
   */
  @Test
  void readWriteMembersGetThePurgesGrace() throws Exception {
    DataSource ds = TestDatabases.pool(PG.get());
    String recent = "purge-rw-recent-" + UUID.randomUUID();
    String old = "purge-rw-old-" + UUID.randomUUID();
    try (JdbcLockClient client = JdbcLockClient.builder().dataSource(ds).createTableIfMissing().build()) {
      // fixed leases: no renewal may move the rows' ends while the test sets them
      LockOptions fixed = LockOptions.fixed(Duration.ofMinutes(5));
      client.readWriteLock(recent, fixed).readLock().acquire();
      client.readWriteLock(old, fixed).readLock().acquire();
      // their leases ended by the database clock: one a second ago, one a grace and a second ago
      long graceMillis = JdbcLockClient.PURGE_GRACE.toMillis();
      try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement("UPDATE "
          + JdbcLockClient.DEFAULT_TABLE + "_rw SET expires_at = (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT"
          + " - ? WHERE lock_name = ?")) {
        ps.setLong(1, 1_000);
        ps.setString(2, recent);
        assertThat(ps.executeUpdate()).isOne();
        ps.setLong(1, graceMillis + 1_000);
        ps.setString(2, old);
        assertThat(ps.executeUpdate()).isOne();
      }
      client.purgeExpired();
      assertThat(members(ds, recent)).as("a member whose lease ended within the grace is kept").isOne();
      assertThat(members(ds, old)).as("a member whose lease ended before the grace is purged").isZero();
    }
  }

  private static long members(DataSource ds, String name) throws SQLException {
    try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM "
        + JdbcLockClient.DEFAULT_TABLE + "_rw WHERE lock_name = ?")) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  private static long rows(DataSource ds, char kind, String name) throws SQLException {
    try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM "
        + JdbcLockClient.DEFAULT_TABLE + " WHERE kind = ? AND lock_name = ?")) {
      ps.setString(1, String.valueOf(kind));
      ps.setString(2, name);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /** A data source that can stop handing out connections (every borrower waits) until resumed. */
  static final class StalledPool extends ForwardingDataSource {
    private volatile CountDownLatch resumed = new CountDownLatch(0);
    private final AtomicInteger waiting = new AtomicInteger();
    private final CountDownLatch someoneWaits = new CountDownLatch(1);

    StalledPool(DataSource target) {
      super(target);
    }

    void stall() {
      resumed = new CountDownLatch(1);
    }

    void resume() {
      resumed.countDown();
    }

    boolean awaitWaiting(long millis) throws InterruptedException {
      return someoneWaits.await(millis, TimeUnit.MILLISECONDS);
    }

    @Override
    public Connection getConnection() throws SQLException {
      CountDownLatch gate = resumed;
      if (gate.getCount() > 0) {
        waiting.incrementAndGet();
        someoneWaits.countDown();
        try {
          if (!gate.await(30, TimeUnit.SECONDS)) {
            throw new SQLException("the stalled pool was never resumed", "08001");
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new SQLException("interrupted", "08001");
        } finally {
          waiting.decrementAndGet();
        }
      }
      return target.getConnection();
    }

    @Override
    public Connection getConnection(String user, String password) throws SQLException {
      return getConnection();
    }
  }
}
