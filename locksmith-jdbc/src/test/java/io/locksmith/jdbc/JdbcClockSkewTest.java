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
    check(JdbcDialect.POSTGRESQL, PG.get().jdbcUrl(), "postgres", "SET TIME ZONE 'Pacific/Kiritimati'", "SET TIME ZONE 'Etc/GMT+12'");
  }

  @Test
  void mariadb() throws Exception {
    check(JdbcDialect.MARIADB, MARIADB.get().jdbcUrl(), "root", "SET time_zone = '+13:00'", "SET time_zone = '-12:00'");
  }

  @Test
  void h2() throws Exception {
    check(JdbcDialect.H2, H2.get().jdbcUrl(), "sa", null, null);
  }

  private static void check(JdbcDialect dialect, String url, String user, String aheadSession, String behindSession)
      throws Exception {
    try (HikariDataSource aheadPool = pool(url, user, aheadSession);
        HikariDataSource behindPool = pool(url, user, behindSession)) {
      // each pool carries one watched lease's renewals (its client's), whose timing judges a takeover
      ConfirmedRenewals aheadRenewals = new ConfirmedRenewals(aheadPool, dialect);
      ConfirmedRenewals behindRenewals = new ConfirmedRenewals(behindPool, dialect);
      try (JdbcLockClient ahead = client(aheadRenewals);
          JdbcLockClient behind = client(behindRenewals)) {
        String name = "skew/" + System.nanoTime();
        noEarlyExpiryNoDoubleGrant(ahead, behind, name);
        noEarlyExpiryNoDoubleGrant(behind, ahead, name);
        // A watched lease of a client in a skewed session zone is never taken over while it is renewed.
        // Both ways at once, on two names: a renewal that wrote a session-zone expiry would be hours in the
        // past for one of the two directions (taken over at once) and hours ahead for the other.
        CompletableFuture<Void> aheadHolds = CompletableFuture.runAsync(() -> watchedNotTakenOver(ahead,
            aheadRenewals, behind, name + "/watched-ahead"));
        watchedNotTakenOver(behind, behindRenewals, ahead, name + "/watched-behind");
        aheadHolds.get(30, TimeUnit.SECONDS);
      }
    }
  }

  private static void watchedNotTakenOver(JdbcLockClient holder, ConfirmedRenewals holderRenewals,
      JdbcLockClient contender, String name) {
    long sentAt = System.nanoTime();
    try (Lease watched = holder.lock(name, LockOptions.watched(WATCHED)).acquire()) {
      Optional<Lease> taken = contender.lock(name).tryAcquire(WATCHED.multipliedBy(2));
      long answeredAt = System.nanoTime();
      LeaseState holderWhenTaken = watched.state();
      taken.ifPresent(Lease::release);
      if (taken.isPresent()) {
        // Normally refused. A takeover is right only if the holder's renewals stopped for a whole lease
        // (its threads stalled on a loaded machine). The database set the newest expiry inside the newest
        // renewal it confirmed (or the grant), so that expiry is no earlier than the statement's send time
        // + WATCHED (5 ms for millisecond flooring and wall clock against nanoTime), and the contender's
        // grant happened before its reply came back. A renewal that wrote a session-zone expiry hours in
        // the past is confirmed all the same and lets the contender in well inside that bound.
        long leaseFrom = holderRenewals.lastConfirmedSend(sentAt);
        long after = answeredAt - Math.max(sentAt, leaseFrom);
        assertThat(Duration.ofNanos(after))
            .as("taken over while renewed: the contender was granted %d ms after the holder's newest confirmed"
                + " renewal (or grant) was sent, before its %d ms lease could end", after / 1_000_000,
                WATCHED.toMillis())
            .isGreaterThanOrEqualTo(WATCHED.minusMillis(5));
        // the holder's validity ends before the database's expiry, and that came before the contender's grant
        assertThat(holderWhenTaken).as("the holder's lease no longer counts as held once taken over")
            .isEqualTo(LeaseState.LOST);
      }
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
    // wall clock against System.nanoTime). Every grant to the contender is judged against that bound,
    // taken when its reply is back (its statement ran before): a stall anywhere after sentAt can only
    // lengthen the time measured, never shorten it, so a stall never looks like a double grant, and a
    // grant judged by a session-zone time (hours early) comes at once, inside the bound.
    Duration earliestEnd = FIXED.minusMillis(5);
    long sentAt = System.nanoTime();
    Lease held = holder.lock(name, LockOptions.fixed(FIXED)).acquire();
    // Normally refused. Granted is right only if the lease ran out first: on a loaded machine the
    // holder's acquire() has returned 2.6 s after sentAt, long past its 300 ms lease (and its validity).
    Optional<Lease> next = contender.lock(name).tryAcquire();
    long answered = System.nanoTime() - sentAt;
    if (next.isPresent()) {
      assertThat(Duration.ofNanos(answered))
          .as("no double grant: the contender's immediate try was granted %d ms after the holder's acquire was"
              + " sent, before the holder's %d ms lease could end", answered / 1_000_000, FIXED.toMillis())
          .isGreaterThanOrEqualTo(earliestEnd);
    } else {
      // 10 s is a failure deadline only: an expiry hours late would not be granted within it
      next = contender.lock(name).tryAcquire(Duration.ofSeconds(10));
    }
    long waited = System.nanoTime() - sentAt;
    assertThat(next).as("taken over once the lease ran out").isPresent();
    assertThat(Duration.ofNanos(waited)).as("no early expiry").isGreaterThanOrEqualTo(earliestEnd);
    // The holder's own validity ends before the database's lease does (it is counted from before the
    // request was sent, less the drift allowance), and the database ended that lease before it granted
    // the contender: two leases that both count as held would be a double grant on the client's side.
    assertThat(held.state()).as("the holder's lease no longer counts as held once the contender has it")
        .isEqualTo(LeaseState.LOST);
    assertThat(next.get().fencingToken()).isGreaterThan(held.fencingToken());
    assertThat(held.release()).as("the expired holder no longer owns it").isFalse();
    next.get().release();
  }

  private static JdbcLockClient client(javax.sql.DataSource pool) {
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
