package io.locksmith.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.ClientOptions;
import io.locksmith.DistributedReadWriteLock;
import io.locksmith.Lease;
import io.locksmith.testkit.zookeeper.ZooKeeperExtension;
import io.locksmith.testkit.zookeeper.ZooKeeperTestServer;
import io.locksmith.zookeeper.ZooKeeperLockClient;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code inspect}, {@code list} and {@code unlock} with {@code --uri zookeeper://…}, every kind. */
class ZooKeeperOperatorCommandTest {
  @RegisterExtension
  static final ZooKeeperExtension<ZooKeeperTestServer> ZK = ZooKeeperExtension.server();

  private final ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
  private final PrintStream out = new PrintStream(outBytes, true, StandardCharsets.UTF_8);
  private final List<AutoCloseable> open = new ArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
  }

  private ZooKeeperLockClient client(String namespace) {
    ZooKeeperLockClient c = ZooKeeperLockClient.builder().uri(ZK.get().uri())
        .options(ClientOptions.builder().namespace(namespace).build()).build();
    open.add(c);
    return c;
  }

  private int run(String... argv) {
    outBytes.reset();
    return Main.run(argv, out, out);
  }

  /** Polls a condition that other clients bring about on the server. */
  private static boolean eventually(Duration limit, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + limit.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      TimeUnit.MILLISECONDS.sleep(5);
    }
    return true;
  }

  private String printed() {
    return outBytes.toString(StandardCharsets.UTF_8);
  }

  @Test
  void inspectShowsEveryKindHeldUnderAName() throws Exception {
    ZooKeeperLockClient app = client("zk-inspect");
    Lease lock = app.lock("payouts/eu").acquire();
    Lease fair = app.fairLock("payouts/eu").acquire();
    CompletableFuture<Lease> waiter = client("zk-inspect").fairLock("payouts/eu").acquireAsync(Duration.ofSeconds(30))
        .toCompletableFuture();
    DistributedReadWriteLock rw = app.readWriteLock("payouts/eu");
    Lease read = rw.readLock().acquire();
    Lease permit = app.semaphore("payouts/eu", 3).acquire();
    assertThat(eventually(Duration.ofSeconds(10), () -> app.fairLock("payouts/eu").inspect()
        .map(i -> i.waiters() == 1).orElse(false))).isTrue();

    int code = run("inspect", "--uri", ZK.get().uri(), "--namespace", "zk-inspect", "payouts/eu");

    assertThat(code).as(printed()).isZero();
    assertThat(printed()).contains("lock 'payouts/eu'").contains("token     " + lock.fencingToken())
        .contains("fair lock 'payouts/eu'").contains("waiters   1").contains("owner     " + app.clientId())
        .contains("readers of 'payouts/eu'").contains("semaphore payouts/eu").contains("permits   3")
        .contains("taken     1");
    // issue 25 item 4: a ZooKeeper hold ends with its holder's session or unrenewed lease, it has no TTL
    assertThat(printed()).doesNotContain("ttl").contains("ends in   at most ")
        .contains(" ms if its holder stops renewing (its lease, bounded by its ZooKeeper session timeout)");
    for (Lease l : List.of(lock, fair, read, permit)) {
      l.release();
    }
    waiter.get().release();
  }

  @Test
  void unlockEvictsTheHolderAndNamesItAndListShowsWhatIsHeld() throws Exception {
    ZooKeeperLockClient app = client("zk-unlock");
    Lease held = app.lock("nightly").acquire();
    Lease permit = app.semaphore("exports", 2).acquire();

    assertThat(run("list", "--uri", ZK.get().uri(), "--namespace", "zk-unlock")).as(printed()).isZero();
    assertThat(printed()).contains("lock").contains("nightly").contains("semaphore").contains("exports")
        .contains("1/2 permits").contains("2 holds under namespace 'zk-unlock'").contains("ENDS WITHIN")
        .doesNotContain("TTL");

    int code = run("unlock", "--uri", ZK.get().uri(), "--namespace", "zk-unlock", "nightly");
    assertThat(code).as(printed()).isZero();
    assertThat(printed()).contains("unlocked lock 'nightly'").contains("evicted   " + app.clientId())
        .contains("token " + held.fencingToken()).contains("now       free")
        .contains("ms at most left unrenewed (lease and ZooKeeper session timeout)").doesNotContain("lease left");
    assertThat(held.release()).as("the evicted holder learns it").isFalse();

    assertThat(run("unlock", "--uri", ZK.get().uri(), "--namespace", "zk-unlock", "--kind", "semaphore", "exports"))
        .isZero();
    assertThat(printed()).contains("unlocked semaphore 'exports'").contains("evicted   1 permit");
    assertThat(permit.release()).isFalse();
  }

  /**
   * Issue 25 items 2 and 5 on ZooKeeper: a semaphore of 3 permits is inspected (in a child JVM, to see
   * its stderr) without a log line or advice, its holders named; list shows one row per permit holder,
   * and unlock names whom it evicted.
   */
  @Test
  void aSemaphoresHoldersAreNamedWithoutALogLineOrAdvice() throws Exception {
    ZooKeeperLockClient app = client("zk-sem");
    List<Lease> permits = List.of(app.semaphore("exports", 3).acquire(), app.semaphore("exports", 3).acquire());

    CliProcess.Result inspect = CliProcess.run("inspect", "--uri", ZK.get().uri(), "--namespace", "zk-sem", "--kind",
        "semaphore", "exports");
    assertThat(inspect.code()).as("%s", inspect).isZero();
    assertThat(inspect.out()).as("%s", inspect).contains("permits   3").contains("taken     2")
        .doesNotContain("setPermits");
    for (Lease p : permits) {
      assertThat(inspect.out()).as("%s", inspect).containsPattern(Pattern.compile("(?m)^holder    "
          + Pattern.quote(app.clientId()) + ":\\S+, token " + p.fencingToken() + ", ends within \\d+ ms$"));
    }
    assertThat(inspect.err()).as("no library log line without --verbose: %s", inspect).isEmpty();

    assertThat(run("list", "--uri", ZK.get().uri(), "--namespace", "zk-sem")).as(printed()).isZero();
    for (Lease p : permits) {
      assertThat(printed()).containsPattern(Pattern.compile("(?m)^semaphore\\s+exports\\s+"
          + Pattern.quote(app.clientId()) + ":\\S+\\s+1 \\(2/3 permits taken\\)\\s+\\d+ ms\\s+"
          + p.fencingToken() + "\\s"));
    }

    assertThat(run("unlock", "--uri", ZK.get().uri(), "--namespace", "zk-sem", "--kind", "semaphore", "exports"))
        .as(printed()).isZero();
    assertThat(printed()).contains("evicted   2 permits").doesNotContain("not named");
    for (Lease p : permits) {
      assertThat(printed()).containsPattern(Pattern.compile("(?m)^ {10}" + Pattern.quote(app.clientId())
          + ":\\S+, token " + p.fencingToken() + ", \\d+ ms at most left unrenewed \\(lease and ZooKeeper session"
          + " timeout\\)$"));
      assertThat(p.release()).as("the evicted holder learns it").isFalse();
    }
  }

  @Test
  void aWrongNamespaceSaysSoWithExitFour() throws Exception {
    client("zk-used").lock("job").acquire();
    assertThat(run("inspect", "--uri", ZK.get().uri(), "--namespace", "zk-typo", "job"))
        .isEqualTo(OperatorCommand.NOT_THERE);
    assertThat(printed()).contains("no Locksmith keys under namespace 'zk-typo'");
    assertThat(run("inspect", "--uri", "zookeeper://127.0.0.1:" + ZK.get().port() + "/a//b", "job")).isEqualTo(2);
  }
}
