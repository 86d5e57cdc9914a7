package io.locksmith.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.locksmith.Lease;
import io.locksmith.LeaseState;
import io.locksmith.LockOptions;
import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.h2.H2Database;
import io.locksmith.testkit.mariadb.MariaDbServer;
import io.locksmith.testkit.postgres.PostgresServer;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Acceptance 2 of issue 15, as issue 23 corrected it: leases are judged by the database clock alone.
 * Two clients whose database sessions run in time zones 26 and 25 hours apart (PostgreSQL, MariaDB) must
 * neither be granted a lock the other holds nor see a lease end early: a fixed lease is taken over only
 * after it ran out in real time, and a watched one is never taken over. This fails for SQL that mixes a
 * session-zone time ({@code now()::timestamp}, MariaDB's {@code NOW()}) into an expiry.
 *
 * <p>The application's own clocks are not skewed here, because no skew of them could be misused: the
 * monotonic {@link io.locksmith.Ticker} only enters differences (the earlier version of this test
 * offset it by an hour, which proved nothing), and no main class reads the wall clock at all, which
 * {@code WallClockArchitectureTest} in locksmith-cli checks on the bytecode of every backend. A client
 * process whose whole wall clock (driver and pool included) is a day off is run by
 * {@link JdbcClientWallClockTest}.
 */
class JdbcClockSkewTest {
  @RegisterExtension
  static final SharedTopology<PostgresServer> PG = PostgresServer.shared();
  @RegisterExtension
  static final SharedTopology<MariaDbServer> MARIADB = MariaDbServer.shared();
  @RegisterExtension
  static final SharedTopology<H2Database> H2 = H2Database.shared();

  /**
   * The fixed lease of the takeover checks. Real time is what is measured (the database clock ends the
   * lease), so it is as short as the client accepts with room to spare: a session-zone expiry is hours
   * off, so any length shows it.
   */
  private static final Duration FIXED = Duration.ofMillis(300);
  /**
   * The watched lease: renewed every third of it (300 ms), so it survives a renewal up to 600 ms late on
   * a loaded machine. The contender waits two lease lengths: past the first expiry, through some six
   * renewals, each of which must push the expiry forward by the database clock.
   */
  private static final Duration WATCHED = Duration.ofMillis(900);

  @Test
  void postgresql() throws Exception {
    check(PG.get().jdbcUrl(), "postgres", "SET TIME ZONE 'Pacific/Kiritimati'", "SET TIME ZONE 'Etc/GMT+12'");
  }

  @Test
  void mariadb() throws Exception {
    check(MARIADB.get().jdbcUrl(), "root", "SET time_zone = '+13:00'", "SET time_zone = '-12:00'");
  }

  @Test
  void h2() throws Exception {
    check(H2.get().jdbcUrl(), "sa", null, null);
  }

  private static void check(String url, String user, String aheadSession, String behindSession) throws Exception {
    try (HikariDataSource aheadPool = pool(url, user, aheadSession);
        HikariDataSource behindPool = pool(url, user, behindSession);
        JdbcLockClient ahead = client(aheadPool);
        JdbcLockClient behind = client(behindPool)) {
      String name = "skew/" + System.nanoTime();
      noEarlyExpiryNoDoubleGrant(ahead, behind, name);
      noEarlyExpiryNoDoubleGrant(behind, ahead, name);
      // A watched lease of a client in a skewed session zone is never taken over while it is renewed.
      // Both ways at once, on two names: a renewal that wrote a session-zone expiry would be hours in the
      // past for one of the two directions (taken over at once) and hours ahead for the other.
      CompletableFuture<Void> aheadHolds = CompletableFuture.runAsync(() -> watchedNotTakenOver(ahead, behind,
          name + "/watched-ahead"));
      watchedNotTakenOver(behind, ahead, name + "/watched-behind");
      aheadHolds.get(30, TimeUnit.SECONDS);
    }
  }

  private static void watchedNotTakenOver(JdbcLockClient holder, JdbcLockClient contender, String name) {
    try (Lease watched = holder.lock(name, LockOptions.watched(WATCHED)).acquire()) {
      assertThat(contender.lock(name).tryAcquire(WATCHED.multipliedBy(2))).as("taken over while renewed").isEmpty();
      assertThat(watched.state()).isEqualTo(LeaseState.HELD);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  private static void noEarlyExpiryNoDoubleGrant(JdbcLockClient holder, JdbcLockClient contender, String name)
      throws Exception {
    // Real time is what is measured. The database starts the lease inside the holder's acquire
    // statement, which runs after this point: the lease cannot end before sentAt + FIXED (by the
    // database clock, kept in milliseconds, so up to 1 ms of flooring; 5 ms allows for it and for the
    // wall clock against System.nanoTime). Measuring from here rather than from acquire()'s return
    // means a stall anywhere after the grant can only lengthen `waited`, never shorten it; an early
    // expiry (judged by a session-zone time) would be taken over at once.
    long sentAt = System.nanoTime();
    Lease held = holder.lock(name, LockOptions.fixed(FIXED)).acquire();
    assertThat(contender.lock(name).tryAcquire()).as("no double grant").isEmpty();
    // 10 s is a failure deadline only: an expiry hours late would not be granted within it
    Optional<Lease> next = contender.lock(name).tryAcquire(Duration.ofSeconds(10));
    long waited = System.nanoTime() - sentAt;
    assertThat(next).as("taken over once the lease ran out").isPresent();
    assertThat(Duration.ofNanos(waited)).as("no early expiry").isGreaterThanOrEqualTo(FIXED.minusMillis(5));
    assertThat(next.get().fencingToken()).isGreaterThan(held.fencingToken());
    assertThat(held.release()).as("the expired holder no longer owns it").isFalse();
    next.get().release();
  }

  private static JdbcLockClient client(HikariDataSource pool) {
    return JdbcLockClient.builder().dataSource(pool).createTableIfMissing().build();
  }

  private static HikariDataSource pool(String url, String user, String sessionSql) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setUsername(user);
    config.setPassword("");
    config.setMaximumPoolSize(6);
    config.setMinimumIdle(0);
    if (sessionSql != null) {
      config.setConnectionInitSql(sessionSql);
    }
    return new HikariDataSource(config);
  }
}
