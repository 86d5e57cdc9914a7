package io.locksmith.jdbc;

import static io.locksmith.tck.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.Lease;
import io.locksmith.LockOptions;
import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.postgres.PostgresServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The fair lock's wake-ups on PostgreSQL: with every waiter's own re-check a minute away (waiterRecheck 1
 * min, places of 3 min), each release hands the lock to the head of the queue, a waiter of another
 * client, by notification, in arrival order; the others stay queued.
 */
class PostgresFairWakeupTest {
  @RegisterExtension
  static final SharedTopology<PostgresServer> PG = PostgresServer.shared();

  private static final LockOptions LONG = LockOptions.watched(Duration.ofSeconds(30));
  private final List<JdbcLockClient> clients = new ArrayList<>();

  private JdbcLockClient client() {
    JdbcLockClient c = JdbcLockClient.builder().dataSource(TestDatabases.pool(PG.get()))
        .waiterRecheck(Duration.ofMinutes(1)).fairQueueTimeout(Duration.ofMinutes(3)).createTableIfMissing().build();
    clients.add(c);
    return c;
  }

  @AfterEach
  void close() {
    clients.forEach(JdbcLockClient::close);
  }

  @Test
  void eachReleaseWakesTheHeadOfAnotherClientByNotification() throws Exception {
    JdbcLockClient holder = client();
    String name = "fair-wake/" + System.nanoTime();
    Lease held = holder.fairLock(name, LONG).acquire();
    List<CompletableFuture<Lease>> waiting = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      waiting.add(client().fairLock(name, LONG).acquireAsync(Duration.ofSeconds(50)).toCompletableFuture());
      int queued = i + 1;
      assertThat(eventually(Duration.ofSeconds(10), () -> holder.fairLock(name).inspect()
          .map(info -> info.waiters() == queued).orElse(false))).as("%d queued", queued).isTrue();
    }
    long previous = held.fencingToken();
    for (int i = 0; i < 3; i++) {
      held.release();
      // 10 s is a failure deadline, far below the one-minute re-check: only a notification is that fast
      held = waiting.get(i).get(10, TimeUnit.SECONDS);
      assertThat(held.fencingToken()).isGreaterThan(previous);
      previous = held.fencingToken();
      for (int j = i + 1; j < 3; j++) {
        assertThat(waiting.get(j)).as("waiter %d, behind the head", j).isNotDone();
      }
      int left = 2 - i;
      assertThat(holder.fairLock(name).inspect()).hasValueSatisfying(info -> assertThat(info.waiters())
          .as("still queued").isEqualTo(left));
    }
    held.release();
  }
}
