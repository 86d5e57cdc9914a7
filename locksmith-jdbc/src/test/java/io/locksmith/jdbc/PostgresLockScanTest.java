package io.locksmith.jdbc;

import static io.locksmith.tck.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.ClientOptions;
import io.locksmith.Lease;
import io.locksmith.LockKind;
import io.locksmith.LockScan.End;
import io.locksmith.LockScan.Found;
import io.locksmith.LockScan.Result;
import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.postgres.PostgresServer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link JdbcLockScan} on PostgreSQL, the dialect whose waiters are stored too: held locks and semaphores
 * of the namespace only, a waited-for lock listed once, the limit told apart from the end.
 */
class PostgresLockScanTest {
  @RegisterExtension
  static final SharedTopology<PostgresServer> PG = PostgresServer.shared();

  private static JdbcLockClient client(String namespace) {
    return JdbcLockClient.builder().dataSource(TestDatabases.pool(PG.get()))
        .options(ClientOptions.builder().namespace(namespace).build()).createTableIfMissing().build();
  }

  @Test
  void findsWhatIsHeldInItsNamespaceOnly() throws Exception {
    String ns = "scan" + System.nanoTime() % 1_000_000;
    try (JdbcLockClient a = client(ns); JdbcLockClient b = client(ns); JdbcLockClient other = client(ns + "x")) {
      assertThat(JdbcLockScan.locks(a, 10)).isEqualTo(new Result(java.util.List.of(), 0, End.FINISHED));
      Lease held = a.lock("b-held").acquire();
      Lease permit = a.semaphore("a-exports", 3).acquire();
      a.lock("c-released").acquire().release();
      other.lock("b-held").acquire();
      CompletableFuture<Lease> waiting = b.lock("b-held").acquireAsync(Duration.ofSeconds(30)).toCompletableFuture();
      assertThat(eventually(Duration.ofSeconds(5), () -> a.inspect("b-held").map(i -> i.waiters() == 1).orElse(false)))
          .isTrue();

      Result all = JdbcLockScan.locks(a, 10);
      assertThat(all.locks()).containsExactly(new Found(LockKind.EXCLUSIVE, "b-held"),
          new Found(LockKind.SEMAPHORE, "a-exports"));
      assertThat(all.end()).isEqualTo(End.FINISHED);
      assertThat(all.traces()).as("rows: two lock rows and the semaphore's count").isEqualTo(3);
      Result one = JdbcLockScan.locks(a, 1);
      assertThat(one.locks()).hasSize(1);
      assertThat(one.end()).isEqualTo(End.LIMIT_REACHED);

      held.release();
      waiting.join().release();
      permit.release();
      assertThat(JdbcLockScan.locks(a, 10).locks()).isEmpty();
      assertThatThrownBy(() -> JdbcLockScan.locks(a, 0)).isInstanceOf(IllegalArgumentException.class);
    }
  }
}
