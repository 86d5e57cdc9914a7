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
 * LISTEN/NOTIFY on PostgreSQL: a release wakes a waiter of another client at once (not at its re-check,
 * set to a minute here), and one release wakes one waiter, not all of them.
 */
class PostgresWakeupTest {
  @RegisterExtension
  static final SharedTopology<PostgresServer> PG = PostgresServer.shared();

  private static final LockOptions LONG = LockOptions.watched(Duration.ofSeconds(30));
  private final List<JdbcLockClient> clients = new ArrayList<>();

  private JdbcLockClient client() {
    JdbcLockClient c = JdbcLockClient.builder().dataSource(TestDatabases.pool(PG.get()))
        .waiterRecheck(Duration.ofMinutes(1)).createTableIfMissing().build();
    clients.add(c);
    return c;
  }

  @AfterEach
  void close() {
    clients.forEach(JdbcLockClient::close);
  }

  @Test
  void aReleaseWakesTheWaiterOfAnotherClientAtOnce() throws Exception {
    JdbcLockClient a = client();
    JdbcLockClient b = client();
    assertThat(a.capabilities().waitsByNotification()).isTrue();
    String name = "wake/" + System.nanoTime();
    List<Long> handOffs = new ArrayList<>();
    for (int i = 0; i < 15; i++) {
      Lease held = a.lock(name, LONG).acquire();
      CompletableFuture<Lease> waiting = b.lock(name, LONG).acquireAsync(Duration.ofSeconds(30)).toCompletableFuture();
      assertThat(eventually(Duration.ofSeconds(5), () -> a.inspect(name).map(info -> info.waiters() == 1)
          .orElse(false))).as("the waiter is registered").isTrue();
      long released = System.nanoTime();
      held.release();
      Lease next = waiting.get(5, TimeUnit.SECONDS);
      handOffs.add(System.nanoTime() - released);
      next.release();
    }
    handOffs.sort(null);
    Duration median = Duration.ofNanos(handOffs.get(handOffs.size() / 2));
    System.out.println("PostgresWakeupTest: hand-off from release to the other client's grant, median of "
        + handOffs.size() + ": " + median.toNanos() / 1000 + " µs, max " + handOffs.get(handOffs.size() - 1) / 1000
        + " µs");
    // far below the one-minute re-check: the waiter was notified
    assertThat(median).as("median hand-off").isLessThan(Duration.ofMillis(500));
  }

  @Test
  void oneReleaseWakesOneWaiter() throws Exception {
    JdbcLockClient holder = client();
    String name = "herd/" + System.nanoTime();
    Lease held = holder.lock(name, LONG).acquire();
    List<CompletableFuture<Lease>> waiting = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      waiting.add(client().lock(name, LONG).acquireAsync(Duration.ofSeconds(50)).toCompletableFuture());
    }
    assertThat(eventually(Duration.ofSeconds(5), () -> holder.inspect(name).map(i -> i.waiters() == 3)
        .orElse(false))).as("three waiters registered").isTrue();
    held.release();
    assertThat(eventually(Duration.ofSeconds(5), () -> waiting.stream().filter(CompletableFuture::isDone).count() == 1))
        .isTrue();
    // the two others were not woken: they are still registered and still waiting
    Lease second = waiting.stream().filter(CompletableFuture::isDone).findFirst().orElseThrow().join();
    assertThat(holder.inspect(name).orElseThrow().waiters()).isEqualTo(2);
    assertThat(waiting.stream().filter(CompletableFuture::isDone).count()).isEqualTo(1);
    second.release();
    assertThat(eventually(Duration.ofSeconds(5), () -> waiting.stream().filter(CompletableFuture::isDone).count() == 2))
        .isTrue();
    for (CompletableFuture<Lease> w : waiting) {
      if (w.isDone()) {
        w.join().release();
      }
    }
    waiting.forEach(w -> w.join().release());
  }
}
