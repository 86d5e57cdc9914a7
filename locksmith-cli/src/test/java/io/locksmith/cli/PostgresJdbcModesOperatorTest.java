package io.locksmith.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.Lease;
import io.locksmith.LeaseState;
import io.locksmith.LockOptions;
import io.locksmith.jdbc.JdbcLockClient;
import io.locksmith.jdbc.JdbcLockMode;
import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.postgres.PostgresServer;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The JDBC operator commands on PostgreSQL (one server for the class's JVM): every mode, the holding
 * session of a pinned lock, and the advisory locks whose names cannot be read back.
 */
class PostgresJdbcModesOperatorTest extends JdbcModesOperatorContract {
  @RegisterExtension
  static final SharedTopology<PostgresServer> PG = PostgresServer.shared();

  @Override
  String url() {
    return PG.get().jdbcUrl();
  }

  @Override
  DataSource dataSource() {
    return new UrlDataSource(PG.get().jdbcUrl(), null, null);
  }

  @Override
  boolean endsSessions() {
    return true;
  }

  @Override
  String holderId() {
    return "PostgreSQL session pid ";
  }

  @Test
  void aRowLockShowsItsHoldingSession() throws Exception {
    app(JdbcLockMode.ROW_LOCK).lock("ledger", LockOptions.watched(Duration.ofSeconds(30))).acquire();
    assertThat(run("inspect", "--mode", "row-lock", "ledger")).as(out()).isZero();
    assertThat(out()).contains("held by   PostgreSQL session pid", "client 127.0.0.1:", "user postgres",
        "(its transaction began");
  }

  @Test
  void anAdvisoryLockIsFoundByNameCountedInListAndEndedByUnlock() throws Exception {
    JdbcLockClient app = app(JdbcLockMode.ADVISORY);
    Lease lease = app.lock("nightly", LockOptions.watched(Duration.ofSeconds(30))).acquire();
    CountDownLatch lost = new CountDownLatch(1);
    lease.onLost(lost::countDown);

    assertThat(run("inspect", "nightly")).as(out()).isZero();
    assertThat(out()).contains("advisory lock 'nightly' (--mode advisory)", "held by   PostgreSQL session pid",
        "owner     not stored").doesNotContain("is free", "token     0");

    // nothing else is held in this test's namespace: the advisory lock is all there is, and it has no name
    assertThat(run("list")).as(out()).isEqualTo(OperatorCommand.CANNOT_TELL);
    assertThat(out()).contains("advisory lock of Locksmith's form is held", "cannot be read back", "cannot be told")
        .doesNotContain("nothing held");
    assertThat(run("list", "--mode", "advisory")).as(out()).isEqualTo(OperatorCommand.CANNOT_TELL);

    assertThat(run("unlock", "nightly")).as(out()).isEqualTo(OperatorCommand.NOT_THERE);
    assertThat(out()).contains("held as an advisory lock (--mode advisory)");
    assertThat(run("unlock", "--mode", "advisory", "nightly")).as(out()).isZero();
    assertThat(out()).contains("unlocked advisory lock 'nightly'", "ended     PostgreSQL session pid",
        "now       free");
    // the holder's client checks its pinned connections every 0.5 s; 30 s is only a failure deadline
    assertThat(lost.await(30, TimeUnit.SECONDS)).as("the holder finds its lease lost").isTrue();
    assertThat(lease.state()).isEqualTo(LeaseState.LOST);
    assertThat(run("inspect", "--mode", "advisory", "nightly")).isZero();
    assertThat(out()).contains("advisory lock 'nightly' is free");
  }
}
