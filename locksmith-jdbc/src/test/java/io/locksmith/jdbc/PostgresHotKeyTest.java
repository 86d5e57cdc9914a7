package io.locksmith.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import io.locksmith.Lease;
import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.postgres.PostgresServer;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Eight clients, one thread each, hand one PostgreSQL lock around, a fixed number of times each, on a pool
 * sized for them (a LISTEN connection and two statements each): every acquisition within its wait, none
 * failed. A count, not a clock, decides how much is tested (it ran for 4 s before: from 600 to 1500
 * hand-offs as the machine was loaded).
 */
class PostgresHotKeyTest {
  @RegisterExtension
  static final SharedTopology<PostgresServer> PG = PostgresServer.shared();

  @Test
  void eightClientsHandOneLockAroundWithoutFailures() throws Exception {
    int clients = 8;
    int rounds = 50;
    try (HikariDataSource pool = TestDatabases.newPool(PG.get().jdbcUrl(), "postgres", clients * 3)) {
      List<JdbcLockClient> all = new ArrayList<>();
      for (int i = 0; i < clients; i++) {
        all.add(JdbcLockClient.builder().dataSource(pool).maxConcurrentStatements(2).createTableIfMissing().build());
      }
      String name = "hot/" + System.nanoTime();
      AtomicInteger cycles = new AtomicInteger();
      AtomicInteger inside = new AtomicInteger();
      AtomicInteger maxInside = new AtomicInteger();
      AtomicReference<Throwable> failure = new AtomicReference<>();
      CountDownLatch go = new CountDownLatch(1);
      List<Thread> threads = new ArrayList<>();
      for (JdbcLockClient c : all) {
        Thread t = new Thread(() -> {
          try {
            go.await();
            for (int i = 0; i < rounds && failure.get() == null; i++) {
              Optional<Lease> lease = c.lock(name).tryAcquire(Duration.ofSeconds(20));
              if (lease.isEmpty()) {
                throw new AssertionError("not granted within 20 s");
              }
              maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
              inside.decrementAndGet();
              lease.get().release();
              cycles.incrementAndGet();
            }
          } catch (Throwable e) {
            failure.compareAndSet(null, e);
          }
        });
        threads.add(t);
        t.start();
      }
      go.countDown();
      for (Thread t : threads) {
        t.join();
      }
      if (failure.get() != null) {
        try (Connection c = PG.get().dataSource().getConnection(); Statement s = c.createStatement();
            ResultSet rs = s.executeQuery("SELECT pid, state, wait_event_type, wait_event, left(query, 120)"
                + " FROM pg_stat_activity WHERE datname = 'postgres'")) {
          while (rs.next()) {
            System.out.println("activity: " + rs.getInt(1) + " " + rs.getString(2) + " " + rs.getString(3) + " "
                + rs.getString(4) + " " + rs.getString(5));
          }
        }
      }
      all.forEach(JdbcLockClient::close);
      assertThat(failure.get()).isNull();
      assertThat(maxInside.get()).isEqualTo(1);
      assertThat(cycles.get()).isEqualTo(clients * rounds);
    }
  }
}
