package io.locksmith.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.ClientOptions;
import io.locksmith.Lease;
import io.locksmith.LeaseState;
import io.locksmith.LockOptions;
import io.locksmith.redis.RedisLockClient;
import io.locksmith.testkit.RedisCluster;
import io.locksmith.testkit.RedisSentinelGroup;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 25, acceptance 2: every answer of {@code inspect}, {@code list} and {@code unlock} about a held lock
 * of each kind is right on a Sentinel group and on a Cluster too, where the keys live on the master the
 * sentinels name or spread over several masters (the single node: {@link OperatorCommandTest}; ZooKeeper:
 * {@link ZooKeeperOperatorCommandTest}; the databases: their own tests).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class OperatorCommandDeploymentsTest {
  private static RedisSentinelGroup sentinels;
  private static RedisCluster cluster;

  @BeforeAll
  static void start() {
    sentinels = RedisSentinelGroup.start();
    cluster = RedisCluster.start();
  }

  @AfterAll
  static void stop() {
    if (sentinels != null) {
      sentinels.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  private final ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
  private final PrintStream out = new PrintStream(outBytes, true, StandardCharsets.UTF_8);

  private int run(String... argv) {
    outBytes.reset();
    return Main.run(argv, out, out);
  }

  private String printed() {
    return outBytes.toString(StandardCharsets.UTF_8);
  }

  private static boolean eventually(BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      Thread.sleep(5);
    }
    return true;
  }

  @Test
  void everyKindHeldThroughSentinelsIsInspectedListedAndUnlocked() throws Exception {
    everyKind(sentinels.sentinelUri(), "ops-sentinel");
  }

  @Test
  void everyKindHeldOnAClusterIsInspectedListedAndUnlocked() throws Exception {
    everyKind(cluster.seedUri().replaceFirst("^redis://", "redis-cluster://"), "ops-cluster");
  }

  /**
   * The application holds one name per kind (several names, so that on a Cluster they land on several
   * masters); the CLI must find each, list each and evict each holder.
   */
  private void everyKind(String uri, String namespace) throws Exception {
    try (RedisLockClient app = RedisLockClient.builder().uri(uri)
        .options(ClientOptions.builder().namespace(namespace).build()).build()) {
      LockOptions lease = LockOptions.watched(Duration.ofSeconds(30));
      Lease lock = app.lock("invoices/eu", lease).acquire();
      Lease fair = app.fairLock("payouts/us", lease).acquire();
      Lease writer = app.readWriteLock("catalog", lease).writeLock().acquire();
      Lease reader = app.readWriteLock("prices", lease).readLock().acquire();
      Lease permit = app.semaphore("exports", 3, lease).acquire();
      String[] ns = {"--uri", uri, "--namespace", namespace};

      for (Object[] c : List.of(new Object[] {"invoices/eu", "lock 'invoices/eu'", lock},
          new Object[] {"payouts/us", "fair lock 'payouts/us'", fair},
          new Object[] {"catalog", "writer of 'catalog'", writer},
          new Object[] {"prices", "readers of 'prices'", reader})) {
        assertThat(run(concat(ns, "inspect", (String) c[0]))).as(printed()).isZero();
        assertThat(printed()).as((String) c[0]).contains((String) c[1] + System.lineSeparator())
            .contains("owner     " + app.clientId()).doesNotContain("' is free: no ");
        if (c[2] != reader) { // a reader's token is the last write's, not its own
          assertThat(printed()).contains("token     " + ((Lease) c[2]).fencingToken());
        }
      }
      assertThat(run(concat(ns, "inspect", "exports"))).as(printed()).isZero();
      assertThat(printed()).contains("semaphore exports").contains("permits   3").contains("taken     1");

      assertThat(run(concat(ns, "list"))).as(printed()).isZero();
      assertThat(printed()).contains("invoices/eu", "payouts/us", "catalog", "prices", "exports")
          .contains("5 holds under namespace '" + namespace + "'").doesNotContain("nothing held");

      assertThat(run(concat(ns, "unlock", "invoices/eu"))).as(printed()).isZero();
      assertThat(run(concat(ns, "unlock", "--kind", "fair", "payouts/us"))).as(printed()).isZero();
      assertThat(run(concat(ns, "unlock", "--kind", "read-write", "--side", "write", "catalog"))).as(printed())
          .isZero();
      assertThat(run(concat(ns, "unlock", "--kind", "read-write", "--side", "read", "prices"))).as(printed())
          .isZero();
      assertThat(run(concat(ns, "unlock", "--kind", "semaphore", "exports"))).as(printed()).isZero();
      for (Lease l : List.of(lock, fair, writer, reader, permit)) {
        assertThat(eventually(() -> l.state() == LeaseState.LOST)).as(l.lockName() + " evicted").isTrue();
      }
      assertThat(run(concat(ns, "list"))).as(printed()).isZero();
      assertThat(printed()).contains("nothing held under namespace '" + namespace + "'");
    }
  }

  private static String[] concat(String[] options, String command, String... rest) {
    String[] argv = new String[1 + options.length + rest.length];
    argv[0] = command;
    System.arraycopy(options, 0, argv, 1, options.length);
    System.arraycopy(rest, 0, argv, 1 + options.length, rest.length);
    return argv;
  }
}
