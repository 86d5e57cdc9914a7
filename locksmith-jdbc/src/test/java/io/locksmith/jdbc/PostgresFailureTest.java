package io.locksmith.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import io.locksmith.BackendUnavailableException;
import io.locksmith.Lease;
import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.TcpProxy;
import io.locksmith.testkit.postgres.PostgresServer;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An unreachable database and an exhausted pool fail acquisition within the command timeout. Real time is
 * what these cases measure (the command timeout is a real-time bound), each with its arithmetic. A case
 * that blackholed its proxy resets the proxy's connections at the end, so that closing the client and the
 * pool does not wait for reads on connections whose stream the blackhole corrupted.
 */
class PostgresFailureTest {
  @RegisterExtension
  static final SharedTopology<PostgresServer> PG = PostgresServer.shared();

  private static final Duration TIMEOUT = Duration.ofMillis(500);
  /** What "within the command timeout" may add: scheduling on a loaded 2-core machine (an allowance). */
  private static final Duration SLACK = Duration.ofMillis(1500);

  @Test
  void aBlackholedDatabaseFailsAcquireWithBackendUnavailableWithinTheTimeout() throws Exception {
    try (TcpProxy proxy = TcpProxy.start("localhost", PG.get().port());
        HikariDataSource pool = TestDatabases.newPool("jdbc:postgresql://" + proxy.host() + ":" + proxy.port()
            + "/postgres", "postgres", 4);
        JdbcLockClient client = JdbcLockClient.builder().dataSource(pool).commandTimeout(TIMEOUT)
            .createTableIfMissing().build()) {
      try (Lease lease = client.lock("reachable").acquire()) {
        assertThat(lease.isHeld()).isTrue();
      }
      proxy.blackhole();
      // a call that does not wait fails within one command timeout: timeout 0.5 s + allowance 1.5 s = 2 s
      long start = System.nanoTime();
      assertThatThrownBy(() -> client.lock("unreachable").tryAcquire())
          .isInstanceOf(BackendUnavailableException.class)
          .hasMessageContaining("within " + TIMEOUT.toMillis() + " ms");
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(TIMEOUT.plus(SLACK));
      // a waiting call keeps trying until its wait runs out, then fails with the outage: wait 0.5 s + the
      // last attempt's timeout 0.5 s + allowance 1.5 s = 2.5 s
      Duration wait = Duration.ofMillis(500);
      start = System.nanoTime();
      assertThatThrownBy(() -> client.lock("unreachable").acquire(wait))
          .isInstanceOf(BackendUnavailableException.class);
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(wait.plus(TIMEOUT).plus(SLACK));
      proxy.heal();
      proxy.resetAll();
    }
  }

  @Test
  void aLeaseThatCannotBeRenewedGoesUncertainThenLost() throws Exception {
    try (TcpProxy proxy = TcpProxy.start("localhost", PG.get().port());
        HikariDataSource pool = TestDatabases.newPool("jdbc:postgresql://" + proxy.host() + ":" + proxy.port()
            + "/postgres", "postgres", 4);
        JdbcLockClient client = JdbcLockClient.builder().dataSource(pool).commandTimeout(Duration.ofMillis(300))
            .createTableIfMissing().build()) {
      Duration leaseTime = Duration.ofMillis(1500);
      Lease lease = client.lock("cut-off", io.locksmith.LockOptions.watched(leaseTime)).acquire();
      List<io.locksmith.LeaseState> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
      java.util.concurrent.CountDownLatch lost = new java.util.concurrent.CountDownLatch(1);
      lease.addListener((l, from, to) -> seen.add(to));
      lease.onLost(lost::countDown);
      long cut = System.nanoTime();
      proxy.blackhole();
      assertThat(lost.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
      // validity ends before the lease does (1.5 s after the grant, which was before the cut) + allowance
      // 1.5 s = 3 s; UNCERTAIN comes first, when the renewal due 0.5 s after the grant times out 0.3 s later
      assertThat(Duration.ofNanos(System.nanoTime() - cut)).as("lost by the end of its validity")
          .isLessThan(leaseTime.plus(SLACK));
      assertThat(seen).containsSubsequence(io.locksmith.LeaseState.UNCERTAIN, io.locksmith.LeaseState.LOST);
      proxy.heal();
      proxy.resetAll();
    }
  }

  @Test
  void aRefusingDatabaseFailsAcquireWithBackendUnavailableWithinTheTimeout() throws Exception {
    try (TcpProxy proxy = TcpProxy.start("localhost", PG.get().port());
        HikariDataSource pool = TestDatabases.newPool("jdbc:postgresql://" + proxy.host() + ":" + proxy.port()
            + "/postgres", "postgres", 4);
        JdbcLockClient client = JdbcLockClient.builder().dataSource(pool).commandTimeout(TIMEOUT)
            .createTableIfMissing().build()) {
      proxy.refuseNew(true);
      proxy.resetAll(); // the database "went down": open connections break, new ones are refused
      // timeout 0.5 s + allowance 1.5 s = 2 s
      long start = System.nanoTime();
      assertThatThrownBy(() -> client.lock("down").tryAcquire()).isInstanceOf(BackendUnavailableException.class);
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(TIMEOUT.plus(SLACK));
      proxy.refuseNew(false);
    }
  }

  @Test
  void anExhaustedPoolFailsAcquireWithinTheTimeoutAndTheClientRecovers() throws Exception {
    // 3 connections: the client's LISTEN connection and two the "application" keeps busy
    try (HikariDataSource pool = TestDatabases.newPool(PG.get().jdbcUrl(), "postgres", 3);
        JdbcLockClient client = JdbcLockClient.builder().dataSource(pool).commandTimeout(TIMEOUT)
            .createTableIfMissing().build()) {
      List<Connection> busy = new ArrayList<>();
      busy.add(pool.getConnection());
      busy.add(pool.getConnection());
      // timeout 0.5 s + allowance 1.5 s = 2 s
      long start = System.nanoTime();
      assertThatThrownBy(() -> client.lock("starved").tryAcquire()).isInstanceOf(BackendUnavailableException.class)
          .hasMessageContaining("no pooled connection free");
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(TIMEOUT.plus(SLACK));
      // building another client needs a connection (metadata, LISTEN): its first borrow fails at the
      // command timeout (0.5 s); the failed build then waits up to 2 s for its worker, which is still
      // blocked in the pool's getConnection (Db.close), + allowance 1.5 s = 4 s
      long building = System.nanoTime();
      assertThatThrownBy(() -> JdbcLockClient.builder().dataSource(pool).commandTimeout(TIMEOUT).build())
          .isInstanceOf(BackendUnavailableException.class);
      assertThat(Duration.ofNanos(System.nanoTime() - building))
          .isLessThan(TIMEOUT.plus(Duration.ofSeconds(2)).plus(SLACK));
      for (Connection c : busy) {
        c.close();
      }
      try (Lease lease = client.lock("starved").acquire(Duration.ofSeconds(5))) {
        assertThat(lease.isHeld()).isTrue();
      }
    }
  }
}
