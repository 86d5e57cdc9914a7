package io.locksmith.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.ClientOptions;
import io.locksmith.Lease;
import io.locksmith.LeaseState;
import io.locksmith.LockOptions;
import io.locksmith.redis.RedisLockClient;
import io.locksmith.redis.RedlockClient;
import io.locksmith.testkit.RedisServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The operator commands against a real Redis, for the answers that must not mislead in an incident:
 * {@code inspect} of a name held as another kind than the plain lock, of a wrong namespace, {@code list},
 * and {@code unlock} naming whom it evicted. Each test uses its own namespace on one shared server.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class OperatorCommandTest {
  private static RedisServer server;

  private final ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
  private final ByteArrayOutputStream errBytes = new ByteArrayOutputStream();
  private final PrintStream out = new PrintStream(outBytes, true, StandardCharsets.UTF_8);
  private final PrintStream err = new PrintStream(errBytes, true, StandardCharsets.UTF_8);
  private final List<AutoCloseable> open = new ArrayList<>();
  private final List<CompletableFuture<Lease>> waiting = new ArrayList<>();

  @BeforeAll
  static void startServer() {
    server = RedisServer.start();
  }

  @AfterAll
  static void stopServer() {
    if (server != null) {
      server.close();
    }
  }

  @AfterEach
  void closeAll() throws Exception {
    waiting.forEach(w -> w.cancel(true));
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
  }

  private RedisLockClient client(String namespace) {
    RedisLockClient c = RedisLockClient.builder().uri(server.uri())
        .options(ClientOptions.builder().namespace(namespace).build()).build();
    open.add(c);
    return c;
  }

  private Lease held(Lease lease) {
    open.add(lease);
    return lease;
  }

  /** Runs the command; returns its exit code, with what it printed in {@link #printed}. */
  private int run(String... argv) {
    outBytes.reset();
    errBytes.reset();
    return Main.run(argv, out, err);
  }

  private String printed() {
    return outBytes.toString(StandardCharsets.UTF_8) + errBytes.toString(StandardCharsets.UTF_8);
  }

  /** Two waiters in two other clients, queued on the server behind the holder of fair lock {@code name}. */
  private void twoFairWaiters(String namespace, String name) throws InterruptedException {
    for (int i = 0; i < 2; i++) {
      waiting.add(client(namespace).fairLock(name).acquireAsync(Duration.ofSeconds(60)).toCompletableFuture());
    }
    RedisLockClient observer = client(namespace);
    assertThat(eventually(() -> observer.fairLock(name).inspect().map(i -> i.waiters() == 2).orElse(false)))
        .as("both waiters queued on the server").isTrue();
  }

  /** Polls a condition that other clients bring about on the server, for at most 20 s. */
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
  void inspectWithoutKindShowsAHeldFairLockAndItsWaitersInsteadOfFree() throws Exception {
    RedisLockClient app = client("incident");
    Lease payouts = held(app.fairLock("payouts").tryAcquire().orElseThrow());
    twoFairWaiters("incident", "payouts");

    int code = run("inspect", "--uri", server.uri(), "--namespace", "incident", "payouts");

    assertThat(printed()).as("inspect of a held fair lock").doesNotContain("is free").contains("fair lock 'payouts'")
        .contains("owner     " + app.clientId()).contains("token     " + payouts.fencingToken())
        .contains("waiters   2");
    assertThat(code).isZero();
  }

  @Test
  void inspectUnderAWrongNamespaceSaysTheNamespaceHasNoLocksmithKeys() {
    held(client("payments").fairLock("payouts").tryAcquire().orElseThrow());

    int code = run("inspect", "--uri", server.uri(), "--namespace", "paymnets", "payouts");

    assertThat(printed()).contains("no Locksmith keys under namespace 'paymnets' on " + server.uri());
    assertThat(code).as("exit code; output:%n%s", printed()).isEqualTo(OperatorCommand.NOT_THERE);
    assertThat(run("inspect", "--uri", server.uri(), "--namespace", "paymnets", "--kind", "fair", "payouts"))
        .isEqualTo(OperatorCommand.NOT_THERE);
    assertThat(printed()).contains("fair lock 'payouts' is free").contains("no Locksmith keys under namespace 'paymnets'");
  }

  @Test
  void inspectOfAFreeNameInANamespaceInUseSaysFreeForEveryKind() {
    RedisLockClient app = client("in-use");
    app.lock("nightly").tryAcquire().orElseThrow().release(); // the namespace keeps its retained token

    assertThat(run("inspect", "--uri", server.uri(), "--namespace", "in-use", "payouts")).isZero();
    assertThat(printed()).contains("'payouts' is free: no lock, fair lock, read-write lock or semaphore of that "
        + "name is held under namespace 'in-use'").doesNotContain("no Locksmith keys");
  }

  @Test
  void inspectOfTheWrongKindNamesTheKindThatHoldsTheName() {
    held(client("wrong-kind").fairLock("payouts").tryAcquire().orElseThrow());

    assertThat(run("inspect", "--uri", server.uri(), "--namespace", "wrong-kind", "--kind", "lock", "payouts"))
        .isZero();
    assertThat(printed()).contains("lock 'payouts' is free")
        .contains("note: 'payouts' is held as a fair lock (--kind fair)");
  }

  @Test
  void inspectWithoutKindShowsEveryKindHeldUnderTheName() {
    RedisLockClient app = client("every-kind");
    Lease writer = held(app.readWriteLock("ledger").writeLock().tryAcquire().orElseThrow());
    held(app.semaphore("ledger", 3).tryAcquire().orElseThrow());

    assertThat(run("inspect", "--uri", server.uri(), "--namespace", "every-kind", "ledger")).isZero();
    assertThat(printed()).contains("writer of 'ledger'").contains("token     " + writer.fencingToken())
        .contains("readers of 'ledger' is free").contains("semaphore ledger").contains("taken     1")
        .doesNotContain("lock 'ledger' is free").doesNotContain("fair lock");
  }

  @Test
  void listShowsEveryHeldLockWithKindHolderTtlTokenAndWaiters() throws Exception {
    RedisLockClient app = client("listing");
    Lease orders = held(app.lock("orders").tryAcquire().orElseThrow());
    Lease payouts = held(app.fairLock("payouts").tryAcquire().orElseThrow());
    twoFairWaiters("listing", "payouts");
    Lease writer = held(app.readWriteLock("ledger").writeLock().tryAcquire().orElseThrow());
    held(app.readWriteLock("catalog").readLock().tryAcquire().orElseThrow());
    held(app.readWriteLock("catalog").readLock().tryAcquire().orElseThrow());
    Lease exports = held(app.semaphore("exports", 4).tryAcquire().orElseThrow());
    held(app.lock("odd{name}:with:colons").tryAcquire().orElseThrow());
    app.lock("released").tryAcquire().orElseThrow().release();
    held(client("listing-other").lock("elsewhere").tryAcquire().orElseThrow());

    assertThat(run("list", "--uri", server.uri(), "--namespace", "listing")).as(printed()).isZero();
    String listed = printed();
    assertThat(listed).containsPattern(row("lock", "orders", app.clientId(), "1", orders.fencingToken(), 0))
        .containsPattern(row("fair", "payouts", app.clientId(), "1", payouts.fencingToken(), 2))
        .containsPattern(row("read-write:writer", "ledger", app.clientId(), "1", writer.fencingToken(), 0))
        .containsPattern(Pattern.compile("(?m)^read-write:readers\\s+catalog\\s+\\S+ \\(one of the readers\\)\\s+2\\s"))
        .containsPattern(Pattern.compile("(?m)^semaphore\\s+exports\\s+" + Pattern.quote(app.clientId())
            + ":\\S+\\s+1 \\(1/4 permits taken\\)\\s+\\d+ ms\\s+" + exports.fencingToken() + "\\s+0$"))
        .containsPattern(Pattern.compile("(?m)^lock\\s+" + Pattern.quote("odd{name}:with:colons") + "\\s"))
        .contains("6 holds under namespace 'listing' on " + server.uri())
        .doesNotContain("released").doesNotContain("elsewhere");
    assertThat(listed.lines().filter(l -> l.startsWith("KIND")).count()).isEqualTo(1);

    assertThat(run("list", "--uri", server.uri(), "--namespace", "listing", "--kind", "fair")).isZero();
    assertThat(printed()).contains("payouts").doesNotContain("orders").contains("1 hold under");
  }

  /** A list line: kind, name, owner (the client id and a sequence), holds, TTL, token, waiters. */
  private static Pattern row(String kind, String name, String clientId, String holds, long token, int waiters) {
    return Pattern.compile("(?m)^" + Pattern.quote(kind) + "\\s+" + Pattern.quote(name) + "\\s+"
        + Pattern.quote(clientId) + "\\S*\\s+" + holds + "\\s+\\d+ ms\\s+" + token + "\\s+" + waiters + "$");
  }

  @Test
  void listStopsAtItsLimitAndSaysMoreAreHeld() {
    RedisLockClient app = client("list-limit");
    for (int i = 0; i < 4; i++) {
      held(app.lock("job-" + i).tryAcquire().orElseThrow());
    }
    assertThat(run("list", "--uri", server.uri(), "--namespace", "list-limit", "--limit", "3")).isZero();
    assertThat(printed()).contains("3 holds under namespace 'list-limit'")
        .contains("stopped at --limit 3 locks: more are held");
    assertThat(run("list", "--uri", server.uri(), "--namespace", "list-limit", "--limit", "0")).isEqualTo(2);
    assertThat(run("list", "--uri", server.uri(), "--namespace", "list-limit", "job-1")).isEqualTo(2);
    assertThat(printed()).contains("list takes no lock name");
    assertThat(run("list", "--uri", server.uri(), "--namespace", "bad*namespace")).isEqualTo(2);
    assertThat(printed()).contains("namespace must be");
    assertThat(run("inspect", "--uri", server.uri(), "--limit", "3", "job-1")).isEqualTo(2);
    assertThat(printed()).contains("--limit applies to list only");
  }

  @Test
  void listOfANamespaceWithoutLocksmithKeysSaysSoAndOfOneWithOnlyReleasedLocksSaysNothingHeld() {
    assertThat(run("list", "--uri", server.uri(), "--namespace", "never-used")).isEqualTo(OperatorCommand.NOT_THERE);
    assertThat(printed()).contains("no Locksmith keys under namespace 'never-used'");
    client("all-released").lock("nightly").tryAcquire().orElseThrow().release();
    assertThat(run("list", "--uri", server.uri(), "--namespace", "all-released")).isZero();
    assertThat(printed()).contains("nothing held under namespace 'all-released'");
  }

  @Test
  void unlockNamesTheEvictedHolderAndItsLeaseGoesLostAtOnce() throws Exception {
    RedisLockClient app = client("evict");
    // a watched 30 s lease: its first renewal is 10 s away, so a loss seen sooner was told (issue 13 item 5)
    Lease victim = held(app.lock("orders", LockOptions.watched(Duration.ofSeconds(30))).tryAcquire().orElseThrow());
    CountDownLatch lost = new CountDownLatch(1);
    victim.onLost(lost::countDown);
    String owner = app.inspect("orders").orElseThrow().owner();

    assertThat(run("unlock", "--uri", server.uri(), "--namespace", "evict", "orders")).isZero();

    assertThat(printed()).contains("unlocked lock 'orders'")
        .contains("evicted   " + owner + ", 1 hold, token " + victim.fencingToken() + ", ")
        .contains("the evicted holder is told now: a notice to its client makes its lease LOST within milliseconds")
        .contains("a client not connected at this moment learns it when it reconnects")
        .contains("at the latest in about")
        .contains("refuses its writes (token " + victim.fencingToken() + ") once it has accepted a write with a "
            + "newer holder's token")
        .contains("now       free");
    assertThat(lost.await(2, TimeUnit.SECONDS)).as("the evicted lease went LOST at once, as printed").isTrue();
    assertThat(victim.state()).isEqualTo(LeaseState.LOST);
    Lease next = held(client("evict").lock("orders").tryAcquire().orElseThrow());
    assertThat(next.fencingToken()).as("the next holder's token, which a fenced resource prefers")
        .isGreaterThan(victim.fencingToken());
  }

  @Test
  void unlockOfTheWrongKindUnlocksNothingAndNamesTheKindThatHoldsTheName() throws Exception {
    RedisLockClient app = client("unlock-kind");
    Lease payouts = held(app.fairLock("payouts").tryAcquire().orElseThrow());

    assertThat(run("unlock", "--uri", server.uri(), "--namespace", "unlock-kind", "payouts"))
        .isEqualTo(OperatorCommand.NOT_THERE);
    assertThat(printed()).contains("nothing was unlocked: no lock 'payouts' is held, but 'payouts' is held as a"
        + " fair lock (--kind fair)").doesNotContain("was not held");
    assertThat(payouts.state()).isEqualTo(LeaseState.HELD);
    assertThat(app.fairLock("payouts").inspect()).isPresent();

    twoFairWaiters("unlock-kind", "payouts");
    assertThat(run("unlock", "--uri", server.uri(), "--namespace", "unlock-kind", "--kind", "fair", "payouts"))
        .isZero();
    assertThat(printed()).contains("unlocked fair 'payouts'").contains("token " + payouts.fencingToken())
        .containsPattern("now       (free|held by \\S+, token \\d+ \\(granted after the unlock\\))");
    assertThat(run("unlock", "--uri", server.uri(), "--namespace", "nobody-here", "payouts"))
        .isEqualTo(OperatorCommand.NOT_THERE);
    assertThat(printed()).contains("no Locksmith keys under namespace 'nobody-here'");
  }

  @Test
  void unlockOfTheReadersNamesOneAndSaysTheyFenceNothing() {
    RedisLockClient app = client("readers-evict");
    held(app.readWriteLock("catalog").readLock().tryAcquire().orElseThrow());
    held(app.readWriteLock("catalog").readLock().tryAcquire().orElseThrow());
    assertThat(run("unlock", "--uri", server.uri(), "--namespace", "readers-evict", "--kind", "read-write",
        "--side", "read", "catalog")).isZero();
    assertThat(printed()).contains("unlocked readers of 'catalog'")
        .containsPattern("evicted   " + Pattern.quote(app.clientId()) + ":\\d+ \\(the reader whose lease ends last\\), 2 holds of all readers")
        .contains("each evicted reader is told now")
        .contains("a read already running under the lease does not stop by itself").doesNotContain("refuses its writes")
        .contains("now       free");
  }

  @Test
  void unlockOfASemaphoreCountsTheEvictedPermits() {
    RedisLockClient app = client("sem-evict");
    held(app.semaphore("exports", 4).tryAcquire().orElseThrow());
    held(app.semaphore("exports", 4).tryAcquire().orElseThrow());
    assertThat(run("unlock", "--uri", server.uri(), "--namespace", "sem-evict", "--kind", "semaphore", "exports"))
        .isZero();
    assertThat(printed()).contains("unlocked semaphore 'exports'").contains("evicted   2 permits")
        .contains("each evicted permit holder is told now");
  }

  /**
   * Issue 25 items 2 and 5: an application's semaphore of 3 permits, looked at by an operator. The command
   * runs in a child JVM, as an operator runs it, so that a library log line on its stderr is seen.
   */
  @Test
  void inspectAndUnlockOfASemaphoreNameItsHoldersWithoutALogLineOrAdvice() throws Exception {
    RedisLockClient app = client("sem-holders");
    RedisLockClient other = client("sem-holders");
    List<Lease> permits = List.of(held(app.semaphore("exports", 3).tryAcquire().orElseThrow()),
        held(app.semaphore("exports", 3).tryAcquire().orElseThrow()),
        held(other.semaphore("exports", 3).tryAcquire().orElseThrow()));
    String[] where = {"--uri", server.uri(), "--namespace", "sem-holders", "--kind", "semaphore", "exports"};

    CliProcess.Result inspect = CliProcess.run(concat("inspect", where));
    assertThat(inspect.code()).as("%s", inspect).isZero();
    assertThat(inspect.out()).as("%s", inspect).contains("permits   3").contains("taken     3")
        .doesNotContain("setPermits");
    for (Lease p : permits) {
      String clientId = p == permits.get(2) ? other.clientId() : app.clientId();
      assertThat(inspect.out()).as("%s", inspect).containsPattern(Pattern.compile("(?m)^holder    "
          + Pattern.quote(clientId) + ":\\S+, token " + p.fencingToken() + ", ttl \\d+ ms$"));
    }
    assertThat(inspect.err()).as("no library log line without --verbose: %s", inspect).isEmpty();

    CliProcess.Result unlock = CliProcess.run(concat("unlock", where));
    assertThat(unlock.code()).as("%s", unlock).isZero();
    assertThat(unlock.out()).as("%s", unlock).contains("evicted   3 permits").doesNotContain("not named");
    for (Lease p : permits) {
      assertThat(unlock.out()).as("%s", unlock).containsPattern(Pattern.compile("(?m)^ {10}\\S+, token "
          + p.fencingToken() + ", \\d+ ms of its lease left$"));
    }
    assertThat(unlock.err()).as("no library log line without --verbose: %s", unlock).isEmpty();

    held(app.semaphore("exports", 3).tryAcquire().orElseThrow());
    CliProcess.Result verbose = CliProcess.run(concat("unlock", concat("--verbose", where)));
    assertThat(verbose.code()).as("%s", verbose).isZero();
    assertThat(verbose.err()).as("--verbose lets the library's lines through: %s", verbose)
        .contains("force-unlocked by an operator");
  }

  private static String[] concat(String first, String... rest) {
    String[] all = new String[rest.length + 1];
    all[0] = first;
    System.arraycopy(rest, 0, all, 1, rest.length);
    return all;
  }

  @Test
  void listAndInspectOnARedlockWalkEveryNodeAndShowTheMajorityHolder() {
    try (RedisServer a = RedisServer.start(); RedisServer b = RedisServer.start(); RedisServer c = RedisServer.start();
        RedlockClient locks = RedlockClient.builder().nodes(a.uri(), b.uri(), c.uri()).build()) {
      Lease lease = locks.lock("ledger").tryAcquire().orElseThrow();
      String nodes = String.join(",", a.uri(), b.uri(), c.uri());
      assertThat(run("list", "--nodes", nodes)).as(printed()).isZero();
      assertThat(printed()).containsPattern(row("lock", "ledger", locks.clientId(), "1", lease.fencingToken(), 0))
          .contains("1 hold under namespace 'locksmith' on the Redlock of")
          .contains("(names found on any node; holders as a majority of nodes agrees)");
      lease.release();
      assertThat(run("inspect", "--nodes", nodes, "ledger")).isZero();
      assertThat(printed()).contains("'ledger' is free: no lock of that name is held");
      assertThat(run("list", "--nodes", nodes, "--namespace", "elsewhere")).isEqualTo(OperatorCommand.NOT_THERE);
      c.stop();
      assertThat(run("list", "--nodes", nodes, "--namespace", "elsewhere")).isZero();
      assertThat(printed()).contains("was not walked").contains("not every node was walked");
    }
  }
}
