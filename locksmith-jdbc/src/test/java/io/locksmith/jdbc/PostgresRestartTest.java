package io.locksmith.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import io.locksmith.Lease;
import io.locksmith.LockOptions;
import io.locksmith.testkit.postgres.PostgresServer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A PostgreSQL server of its own, restarted cleanly and after kill -9: fencing tokens never go back (the
 * sequence is durable), and the LISTEN connection comes back so that waiters are woken by notification
 * again.
 */
class PostgresRestartTest {
  private static PostgresServer pg;
  private static HikariDataSource pool;

  @BeforeAll
  static void start() {
    pg = PostgresServer.start();
    pool = TestDatabases.newPool(pg.jdbcUrl(), "postgres", 10);
  }

  @AfterAll
  static void stop() {
    if (pool != null) {
      pool.close();
    }
    if (pg != null) {
      pg.close();
    }
  }

  @Test
  void tokensKeepIncreasingAcrossRestartsAndWakeUpsComeBack() throws Exception {
    try (JdbcLockClient a = client(); JdbcLockClient b = client()) {
      long last = 0;
      for (String restart : new String[] {"clean", "kill -9"}) {
        for (int i = 0; i < 3; i++) {
          try (Lease lease = a.lock("durable").acquire(Duration.ofSeconds(10))) {
            assertThat(lease.fencingToken()).as("after a " + restart + " restart").isGreaterThan(last);
            last = lease.fencingToken();
          }
        }
        if (restart.equals("clean")) {
          pg.stop();
        } else {
          pg.kill9();
        }
        pg.restart();
        try (Lease lease = awaitServer(a)) {
          assertThat(lease.fencingToken()).isGreaterThan(last);
          last = lease.fencingToken();
        }
        // after the restart, b's LISTEN connection is back: a release wakes it well before its re-check
        Lease held = a.lock("wake").acquire(Duration.ofSeconds(10));
        CompletableFuture<Lease> waiting = b.lock("wake").acquireAsync(Duration.ofSeconds(40)).toCompletableFuture();
        assertThat(io.locksmith.tck.Eventually.eventually(Duration.ofSeconds(10),
            () -> a.inspect("wake").map(info -> info.waiters() == 1).orElse(false))).isTrue();
        long released = System.nanoTime();
        held.release();
        waiting.get(10, TimeUnit.SECONDS).release();
        // real time tells a notification from a re-check: a notified waiter gets the lock milliseconds
        // after the release; unnotified, it would wait for its 1 min re-check. 5 s allows for a loaded host
        assertThat(Duration.ofNanos(System.nanoTime() - released)).isLessThan(Duration.ofSeconds(5));
      }
    }
  }

  /** The first acquisition after a restart: the pool's old connections fail until replaced. */
  private static Lease awaitServer(JdbcLockClient client) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      try {
        return client.lock("durable", LockOptions.watched(Duration.ofSeconds(30))).acquire(Duration.ofSeconds(5));
      } catch (io.locksmith.BackendUnavailableException e) {
        if (System.nanoTime() > deadline) {
          throw e;
        }
        Thread.sleep(100);
      }
    }
  }

  private static JdbcLockClient client() {
    return JdbcLockClient.builder().dataSource(pool).commandTimeout(Duration.ofSeconds(2))
        .waiterRecheck(Duration.ofMinutes(1)).createTableIfMissing().build();
  }
}
