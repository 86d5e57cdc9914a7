package io.locksmith.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.ClientOptions;
import io.locksmith.Lease;
import io.locksmith.LeaseState;
import io.locksmith.LockOptions;
import io.locksmith.jdbc.JdbcLockClient;
import io.locksmith.jdbc.JdbcLockMode;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 25 item 1: every answer of {@code inspect}, {@code list} and {@code unlock --jdbc-url} about a lock
 * that another client (the "application") holds, in each mode the database offers, is right or says it
 * cannot tell (exit 5): never "free", "nothing held" or "was not held". The row-lock and advisory modes
 * were read by a lease-mode client only, which saw nothing of them. Each test works in a namespace of its
 * own, so the tests of one database share its server.
 */
abstract class JdbcModesOperatorContract {
  private final ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
  private final ByteArrayOutputStream errBytes = new ByteArrayOutputStream();
  private final PrintStream out = new PrintStream(outBytes, true, StandardCharsets.UTF_8);
  private final PrintStream err = new PrintStream(errBytes, true, StandardCharsets.UTF_8);
  private final String namespace = "ns-" + UUID.randomUUID().toString().substring(0, 8);
  private final List<JdbcLockClient> apps = new ArrayList<>();

  /** @return the database's JDBC URL with its user, as an operator passes it */
  abstract String url();

  /** @return a data source of the database for the application's clients */
  abstract DataSource dataSource();

  /** @return whether the database can end another client's session (PostgreSQL) */
  abstract boolean endsSessions();

  /** @return how inspect names the holding session, e.g. "PostgreSQL session pid " */
  abstract String holderId();

  /** @return the statement that ends a holding session by hand (where the command does not), e.g. "KILL CONNECTION " */
  String byHand() {
    return null;
  }

  @AfterEach
  void closeApps() {
    apps.forEach(JdbcLockClient::close);
  }

  JdbcLockClient app(JdbcLockMode mode) {
    JdbcLockClient c = JdbcLockClient.builder().dataSource(dataSource()).table("cli_locks").createTableIfMissing()
        .mode(mode).options(ClientOptions.builder().namespace(namespace).build()).build();
    apps.add(c);
    return c;
  }

  int run(String command, String... more) {
    List<String> argv = new ArrayList<>(List.of(command, "--jdbc-url", url(), "--table", "cli_locks",
        "--namespace", namespace));
    argv.addAll(List.of(more));
    outBytes.reset();
    errBytes.reset();
    return Main.run(argv.toArray(String[]::new), out, err);
  }

  String out() {
    return outBytes.toString(StandardCharsets.UTF_8);
  }

  String err() {
    return errBytes.toString(StandardCharsets.UTF_8);
  }

  @Test
  void aLeaseLockIsShownListedAndUnlocked() throws Exception {
    JdbcLockClient app = app(JdbcLockMode.LEASE);
    Lease lease = app.lock("invoice", LockOptions.watched(Duration.ofSeconds(30))).acquire();
    assertThat(run("inspect", "invoice")).as(out()).isZero();
    assertThat(out()).contains("lock 'invoice'", app.clientId(), "token     " + lease.fencingToken())
        .doesNotContain("is free");
    assertThat(run("inspect", "--mode", "row-lock", "invoice")).as(out()).isZero();
    assertThat(out()).contains("row lock 'invoice' is free", "note: 'invoice' is held as a lease lock (--mode lease)");
    assertThat(run("list")).as(out()).isZero();
    assertThat(out()).contains("invoice", app.clientId(), "1 hold");
    assertThat(run("unlock", "invoice")).as(out()).isZero();
    assertThat(out()).contains("unlocked lock 'invoice'", "token " + lease.fencingToken());
  }

  @Test
  void aLeaseSemaphoreIsShownListedAndUnlocked() throws Exception {
    JdbcLockClient app = app(JdbcLockMode.LEASE);
    // kept referenced: a lease that becomes unreachable is released by its client
    Lease permit = app.semaphore("exports", 2).acquire();
    assertThat(run("inspect", "exports")).as(out()).isZero();
    assertThat(out()).contains("semaphore exports", "taken     1").doesNotContain("is free");
    assertThat(run("list", "--kind", "semaphore")).as(out()).isZero();
    assertThat(out()).contains("exports", "1/2 permits");
    assertThat(run("unlock", "--kind", "semaphore", "exports")).as(out()).isZero();
    assertThat(out()).contains("unlocked semaphore 'exports'", "evicted   1 permit");
    assertThat(permit.fencingToken()).isPositive();
  }

  /**
   * The fair lock (lease mode, kind F) with two queued waiters of another client: shown with its queue by a
   * plain inspect and by --kind fair, named by --kind lock and by a plain unlock (which unlocks nothing),
   * listed, and force-unlocked by unlock --kind fair, after which the head of the queue is granted.
   */
  @Test
  void aFairLockWithQueuedWaitersIsShownListedAndUnlocked() throws Exception {
    JdbcLockClient app = app(JdbcLockMode.LEASE);
    JdbcLockClient queue = app(JdbcLockMode.LEASE);
    Lease lease = app.fairLock("payouts", LockOptions.watched(Duration.ofSeconds(30))).acquire();
    CountDownLatch lost = new CountDownLatch(1);
    lease.onLost(lost::countDown);
    java.util.concurrent.CompletableFuture<Lease> head = queue.fairLock("payouts").acquireAsync(Duration.ofSeconds(60))
        .toCompletableFuture();
    awaitQueued(app, "payouts", 1);
    java.util.concurrent.CompletableFuture<Lease> second = queue.fairLock("payouts")
        .acquireAsync(Duration.ofSeconds(60)).toCompletableFuture();
    awaitQueued(app, "payouts", 2);

    assertThat(run("inspect", "payouts")).as(out()).isZero();
    assertThat(out()).contains("fair lock 'payouts'", app.clientId(), "token     " + lease.fencingToken(),
        "waiters   2").doesNotContain("is free");
    assertThat(run("inspect", "--kind", "lock", "payouts")).as(out()).isZero();
    assertThat(out()).contains("lock 'payouts' is free", "note: 'payouts' is held as a fair lock (--kind fair)");
    assertThat(run("list")).as(out()).isZero();
    assertThat(out()).containsPattern("(?m)^fair\\s+payouts\\s+" + java.util.regex.Pattern.quote(app.clientId())
        + ":\\S+\\s+1\\s+\\d+ ms\\s+" + lease.fencingToken() + "\\s+2\\s*$");
    assertThat(run("list", "--kind", "lock")).as(out()).isZero();
    assertThat(out()).doesNotContain("payouts");

    assertThat(run("unlock", "payouts")).as("a plain unlock acts on the exclusive lock: " + out())
        .isEqualTo(OperatorCommand.NOT_THERE);
    assertThat(out()).contains("nothing was unlocked", "held as a fair lock (--kind fair)");
    assertThat(lease.state()).isEqualTo(LeaseState.HELD);
    assertThat(run("unlock", "--kind", "fair", "payouts")).as(out()).isZero();
    assertThat(out()).contains("unlocked fair 'payouts'", "token " + lease.fencingToken());
    Lease next = head.get(30, TimeUnit.SECONDS);
    assertThat(next.fencingToken()).as("the head of the queue, granted after the unlock")
        .isGreaterThan(lease.fencingToken());
    assertThat(second).isNotDone();
    // told at once on PostgreSQL; at its next renewal (10 s into a 30 s lease) elsewhere; 30 s is only a deadline
    assertThat(lost.await(30, TimeUnit.SECONDS)).as("the evicted holder finds its lease lost").isTrue();
    next.release();
    second.get(30, TimeUnit.SECONDS).release();
  }

  /** Waits (polling the holder's view, at most 10 s) until {@code count} waiters are queued on the fair lock. */
  private static void awaitQueued(JdbcLockClient observer, String name, int count) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (observer.fairLock(name).inspect().map(i -> i.waiters()).orElse(-1) != count) {
      assertThat(System.nanoTime() - deadline).as("%d waiter(s) queued on '%s'", count, name).isNegative();
      Thread.sleep(5); // polls a condition, as an assertion does; nothing is synchronised by the pause
    }
  }

  /**
   * Issue 28 item 1: the lease mode's read-write lock, each side shown, listed and unlocked on its own; the
   * evicted holders are told (PostgreSQL) or find out at their next renewal (a second at most here). The
   * pinned modes have no read-write lock.
   */
  @Test
  void aLeaseReadWriteLockIsShownListedAndUnlockedBySide() throws Exception {
    JdbcLockClient app = app(JdbcLockMode.LEASE);
    LockOptions watched = LockOptions.watched(Duration.ofSeconds(3));
    Lease write = app.readWriteLock("ledger", watched).writeLock().acquire();
    assertThat(run("inspect", "--kind", "read-write", "ledger")).as(out()).isZero();
    assertThat(out()).contains("writer of 'ledger'", app.clientId(), "token     " + write.fencingToken(),
        "readers of 'ledger' is free");
    assertThat(run("list", "--kind", "read-write")).as(out()).isZero();
    assertThat(out()).containsPattern("(?m)^read-write:writer\\s+ledger\\s").contains("1 hold");
    CountDownLatch writerLost = new CountDownLatch(1);
    write.onLost(writerLost::countDown);
    assertThat(run("unlock", "--kind", "read-write", "--side", "write", "ledger")).as(out()).isZero();
    assertThat(out()).contains("unlocked writer of 'ledger'", "token " + write.fencingToken(), "now       free");
    assertThat(writerLost.await(10, TimeUnit.SECONDS)).as("the evicted writer finds out").isTrue();

    Lease read = app.readWriteLock("ledger", watched).readLock().acquire();
    CountDownLatch readerLost = new CountDownLatch(1);
    read.onLost(readerLost::countDown);
    assertThat(run("list")).as(out()).isZero();
    assertThat(out()).containsPattern("(?m)^read-write:readers\\s+ledger\\s");
    assertThat(run("unlock", "--kind", "read-write", "--side", "read", "ledger")).as(out()).isZero();
    assertThat(out()).contains("unlocked readers of 'ledger'", "now       free");
    assertThat(readerLost.await(10, TimeUnit.SECONDS)).as("the evicted reader finds out").isTrue();
    assertThat(run("inspect", "--mode", "row-lock", "--kind", "read-write", "ledger")).isEqualTo(2);
    assertThat(err()).contains("exclusive locks only");
  }

  @Test
  void aRowLockIsNeverCalledFree() throws Exception {
    JdbcLockClient app = app(JdbcLockMode.ROW_LOCK);
    Lease lease = app.lock("ledger", LockOptions.watched(Duration.ofSeconds(30))).acquire();
    CountDownLatch lost = new CountDownLatch(1);
    lease.onLost(lost::countDown);

    assertThat(run("inspect", "ledger")).as(out()).isZero();
    assertThat(out()).contains("row lock 'ledger' (--mode row-lock)", "held by   " + holderId(), "since     ",
        "owner     not visible")
        .doesNotContain("is free", "token     0", "ttl       0 ms");
    assertThat(run("inspect", "--mode", "row-lock", "ledger")).as(out()).isZero();
    assertThat(out()).contains("row lock 'ledger'", "held by");
    assertThat(run("inspect", "--mode", "lease", "ledger")).as("--mode lease looks at lease locks only")
        .isZero();
    assertThat(out()).contains("is free", "note: 'ledger' is held as a row lock (--mode row-lock)");

    assertThat(run("list")).as(out()).isZero();
    assertThat(out()).contains("row-lock", "ledger", "1 hold").doesNotContain("nothing held");
    assertThat(run("list", "--mode", "row-lock")).as(out()).isZero();
    assertThat(out()).contains("ledger", "1 row lock held");

    assertThat(run("unlock", "ledger")).as("a plain unlock acts on lease locks and names the row lock: "
        + out()).isEqualTo(OperatorCommand.NOT_THERE);
    assertThat(out()).contains("nothing was unlocked: no lock 'ledger' is held, but 'ledger' is held as a row lock"
        + " (--mode row-lock)").doesNotContain("was not held");
    assertThat(run("unlock", "--mode", "lease", "ledger")).as("--mode lease names the row lock too: " + out())
        .isEqualTo(OperatorCommand.NOT_THERE);
    assertThat(out()).contains("is held as a row lock (--mode row-lock)").doesNotContain("was not held");

    int unlocked = run("unlock", "--mode", "row-lock", "ledger");
    if (endsSessions()) {
      assertThat(unlocked).as(out()).isZero();
      assertThat(out()).contains("unlocked row lock 'ledger'", "ended     PostgreSQL session pid", "now       free");
      // the holder's client checks its pinned connections every 0.5 s; 30 s is only a failure deadline
      assertThat(lost.await(30, TimeUnit.SECONDS)).as("the holder finds its lease lost").isTrue();
      assertThat(lease.state()).isEqualTo(LeaseState.LOST);
    } else {
      assertThat(unlocked).as(out()).isEqualTo(OperatorCommand.CANNOT_TELL);
      assertThat(out()).contains("held by   " + holderId(), "not unlocked", byHand())
          .doesNotContain("was not held", "<id>");
      assertThat(lease.state()).isEqualTo(LeaseState.HELD);
      lease.release();
    }
    assertThat(run("inspect", "--mode", "row-lock", "ledger")).isZero();
    assertThat(out()).contains("row lock 'ledger' is free");
  }
}
