package io.locksmith.check;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.DistributedReadWriteLock;
import io.locksmith.LockClient;
import io.locksmith.LockKind;
import io.locksmith.LockOptions;
import io.locksmith.injvm.InJvmLockServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code --kind fair} and {@code --kind read-write}: real runs take the kind's locks and report nothing
 * wrong; a deliberately broken read-write lock (its read side excludes no writer) is caught; a backend
 * without the kind is refused before anything runs.
 */
class LockKindsTest {
  private final ByteArrayOutputStream logBytes = new ByteArrayOutputStream();
  private final PrintStream log = new PrintStream(logBytes, true, StandardCharsets.UTF_8);

  private String log() {
    return logBytes.toString(StandardCharsets.UTF_8);
  }

  /** The register and history of a run, driven by workers in this JVM (what the in-JVM backend's run does). */
  private static final class Bench implements Channel {
    final History history = new History();
    final Register register = new Register(false, history, 2, 8);

    @Override public void event(Event e) {
      history.add(e);
    }

    @Override public Register.ReadResult read(String client, String lock, long token) {
      return register.read(client, lock, token);
    }

    @Override public boolean write(String client, String lock, long token, long readFrom) {
      return register.write(client, lock, token, readFrom);
    }

    @Override public long peek(String client, String lock, boolean again, long firstVersion) {
      return register.peek(client, lock, again, firstVersion);
    }

    long readHolds() {
      return history.snapshot().stream().filter(e -> e.op() == Event.Op.PEEK && Register.AGAIN.equals(e.detail()))
          .count();
    }
  }

  /**
   * A client whose read-write locks have a broken read side: it takes an exclusive lock of a name of its
   * own, so it never waits for a writer and no writer waits for it.
   */
  private static LockClient brokenReadSide(LockClient real) {
    return (LockClient) Proxy.newProxyInstance(LockClient.class.getClassLoader(), new Class<?>[] {LockClient.class},
        (proxy, method, args) -> {
          if (method.getName().equals("readWriteLock") && args != null && args.length == 2) {
            DistributedReadWriteLock rw = real.readWriteLock((String) args[0], (LockOptions) args[1]);
            return Proxy.newProxyInstance(LockClient.class.getClassLoader(),
                new Class<?>[] {DistributedReadWriteLock.class}, (p, m, a) -> m.getName().equals("readLock")
                    ? real.lock("broken-read-" + args[0] + "-" + System.identityHashCode(p), (LockOptions) args[1])
                    : invoke(m, rw, a));
          }
          return invoke(method, real, args);
        });
  }

  private static Object invoke(java.lang.reflect.Method m, Object target, Object[] args) throws Throwable {
    try {
      return m.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  /**
   * Two writers and two readers on one lock name until {@code enough} holds; returns what the checker
   * found. Bounded by the deadline; the stop flag ends the workers.
   */
  private static Checkers.Findings contend(java.util.function.Function<LockClient, LockClient> wrap, Bench bench,
      java.util.function.BooleanSupplier enough) throws Exception {
    InJvmLockServer server = new InJvmLockServer();
    AtomicBoolean stop = new AtomicBoolean();
    List<LockClient> clients = new ArrayList<>();
    List<Thread> threads = new ArrayList<>();
    try {
      for (int i = 0; i < 4; i++) {
        LockClient client = wrap.apply(server.newClient(Clients.options(null)));
        clients.add(client);
        threads.add(new Thread(new Worker("t" + i, client, LockOptions.watched(Duration.ofSeconds(2)),
            List.of("lock-0"), Duration.ofSeconds(5), bench, stop::get, LockKind.READ_WRITE,
            Worker.reads(LockKind.READ_WRITE, i)), "kinds-worker-" + i));
      }
      threads.forEach(Thread::start);
      // bounds the test, not a synchronization: the history wakes the waiter on every event
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      boolean reached = bench.history.await(enough, deadline);
      assertThat(reached).as(() -> "enough holds within 60 s; events by op: " + bench.history.snapshot().stream()
          .collect(java.util.stream.Collectors.groupingBy(e -> e.op() + " " + e.type() + " " + e.detail(),
              java.util.TreeMap::new, java.util.stream.Collectors.counting()))).isTrue();
    } finally {
      stop.set(true);
      for (Thread t : threads) {
        t.join(10_000);
      }
      clients.forEach(LockClient::close);
    }
    return Checkers.check(bench.history.snapshot(), System.nanoTime());
  }

  @Test
  @Timeout(90)
  void aReadSideThatExcludesNoWriterIsCaught() throws Exception {
    Bench bench = new Bench();
    Checkers.Findings f = contend(LockKindsTest::brokenReadSide, bench,
        () -> !Checkers.writesUnderReadHolds(bench.history.snapshot()).isEmpty());
    assertThat(f.writesUnderReadHolds()).isNotEmpty();
    assertThat(f.overlaps()).as("the writers still exclude each other").isEmpty();
  }

  @Test
  @Timeout(90)
  void aCorrectReadWriteLockLetsNoWriteLandUnderAReader() throws Exception {
    Bench bench = new Bench();
    Checkers.Findings f = contend(c -> c, bench, () -> bench.readHolds() >= 60 && bench.history.grants() >= 30);
    assertThat(f.writesUnderReadHolds()).isEmpty();
    assertThat(f.overlaps()).isEmpty();
    assertThat(f.lostUpdates()).isZero();
  }

  @Test
  @Timeout(60)
  void inJvmRunsTakeTheFairLockAndTheReadWriteLock() throws Exception {
    for (LockKind kind : List.of(LockKind.FAIR, LockKind.READ_WRITE)) {
      CheckReport r = SafetyCheck.run(CheckSettings.builder(CheckBackend.IN_JVM, Fault.NONE).kind(kind)
          .duration(Duration.ofSeconds(30)).stopEarly(60, 0).build(), log);
      assertThat(r.acquisitions()).as(log()).isGreaterThanOrEqualTo(60);
      assertThat(r.brokenPromises()).as(r.toTable()).isEmpty();
      assertThat(r.writesUnderReadHolds()).isZero();
      assertThat(r.toJson()).contains("\"kind\": \"" + CheckSettings.kindName(kind) + "\"");
      assertThat(r.settings().toString()).contains(" / " + CheckSettings.kindName(kind));
    }
  }

  /** Child JVMs on Redis: the readers' looks travel over the pipe protocol and are recorded. */
  @Test
  @Timeout(120)
  void aRedisReadWriteRunRecordsItsReaders() throws Exception {
    CheckReport r = SafetyCheck.run(CheckSettings.builder(CheckBackend.REDIS, Fault.NONE).kind(LockKind.READ_WRITE)
        .duration(Duration.ofSeconds(60)).lease(Duration.ofSeconds(4), true).stopEarly(40, 0).build(), log);
    assertThat(r.acquisitions()).as(log()).isGreaterThanOrEqualTo(40);
    assertThat(r.brokenPromises()).as(r.toTable()).isEmpty();
    assertThat(r.events().stream().filter(e -> e.op() == Event.Op.PEEK && Register.AGAIN.equals(e.detail())))
        .as("read holds of the reading clients p0-t1 and p1-t1").isNotEmpty()
        .allMatch(e -> e.client().endsWith("-t1"));
  }

  /** ZooKeeper's fair lock (its exclusive lock is fair already) and its read-write lock, in child JVMs. */
  @Test
  @Timeout(150)
  void zooKeeperRunsTakeTheFairLockAndTheReadWriteLock() throws Exception {
    for (LockKind kind : List.of(LockKind.FAIR, LockKind.READ_WRITE)) {
      CheckReport r = SafetyCheck.run(CheckSettings.builder(CheckBackend.ZOOKEEPER, Fault.NONE).kind(kind)
          .duration(Duration.ofSeconds(60)).lease(Duration.ofSeconds(4), true).stopEarly(30, 0).build(), log);
      assertThat(r.acquisitions()).as(log()).isGreaterThanOrEqualTo(30);
      assertThat(r.brokenPromises()).as(r.toTable()).isEmpty();
    }
  }

  @Test
  @Timeout(60)
  void aBackendWithoutTheKindIsRefusedNamingTheKindsItHas() throws Exception {
    // Redlock offers the exclusive lock only
    CheckSettings fairOnRedlock = CheckSettings.builder(CheckBackend.REDLOCK, Fault.NONE).kind(LockKind.FAIR).build();
    assertThatThrownBy(() -> SafetyCheck.run(fairOnRedlock, log)).isInstanceOf(SafetyCheck.UnsupportedKindException.class)
        .hasMessageContaining("does not offer --kind fair").hasMessageContaining("it offers: exclusive");
  }

  @Test
  void kindsParseAndBadCombinationsFailAtBuild() {
    assertThat(CheckSettings.parseKind("read-write")).isEqualTo(LockKind.READ_WRITE);
    assertThat(CheckSettings.kindName(LockKind.FAIR)).isEqualTo("fair");
    assertThatThrownBy(() -> CheckSettings.parseKind("semaphore")).hasMessageContaining("exclusive, fair, read-write");
    assertThatThrownBy(() -> CheckSettings.builder(CheckBackend.REDIS, Fault.NONE).kind(LockKind.SEMAPHORE).build())
        .hasMessageContaining("not semaphores");
    assertThatThrownBy(() -> CheckSettings.builder(CheckBackend.REDIS, Fault.NONE).kind(LockKind.READ_WRITE)
        .clients(2).processes(2).build()).hasMessageContaining("readers as well as writers");
    assertThat(CheckSettings.builder(CheckBackend.REDIS, Fault.NONE).kind(LockKind.FAIR).build().mutate().build()
        .kind()).isEqualTo(LockKind.FAIR);
    assertThat(Worker.reads(LockKind.READ_WRITE, 1)).isTrue();
    assertThat(Worker.reads(LockKind.READ_WRITE, 0)).isFalse();
    assertThat(Worker.reads(LockKind.FAIR, 1)).isFalse();
  }
}
