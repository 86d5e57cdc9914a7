package io.locksmith.check;

import io.locksmith.LockClient;
import io.locksmith.LockOptions;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One run: starts the backend and the clients, lets the nemesis inject faults for the duration, stops
 * everything and hands the history to the checkers. Used by one thread; the nemesis, the children's
 * reader threads and the watchdog run beside it.
 */
final class Run {
  static final Duration CHILD_START_TIMEOUT = Duration.ofSeconds(60);
  /** Set-up and shut-down allowance beyond the duration before the watchdog ends the run by force. */
  static final Duration HARD_DEADLINE_SLACK = Duration.ofSeconds(150);

  final CheckSettings settings;
  final History history = new History();
  final Register register;
  final List<Child> children = new CopyOnWriteArrayList<>();
  /** The JVM of the busy loops ({@link CheckSettings#load()}), or null without load. */
  private volatile Process load;
  final List<String> faultLog = Collections.synchronizedList(new ArrayList<>());
  private final PrintStream log;
  private final AtomicInteger nextChild = new AtomicInteger();
  private final AtomicBoolean localStop = new AtomicBoolean();
  private final Path workDir;
  Deployment deployment;
  volatile long startNanos;
  volatile boolean started;

  Run(CheckSettings settings, PrintStream log) throws IOException {
    this.settings = settings;
    this.log = log;
    this.register = new Register(settings.fenced(), history, settings.thinkMin().toMillis(),
        settings.thinkMax().toMillis());
    this.workDir = Files.createTempDirectory("locksmith-check-");
  }

  CheckReport execute() throws Exception {
    ScheduledExecutorService watchdog = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "check-watchdog");
      t.setDaemon(true);
      return t;
    });
    Thread main = Thread.currentThread();
    AtomicBoolean forced = new AtomicBoolean();
    watchdog.schedule(() -> {
      forced.set(true);
      log.println("check: hard deadline passed; ending the run by force");
      children.forEach(Child::destroy);
      main.interrupt();
    }, settings.duration().plus(HARD_DEADLINE_SLACK).toMillis(), TimeUnit.MILLISECONDS);
    List<LockClient> localClients = new ArrayList<>();
    List<Thread> localThreads = new ArrayList<>();
    Nemesis nemesis = null;
    boolean completed = false;
    try {
      log.println("check: starting " + settings.backend().description() + " ...");
      deployment = Deployment.start(settings);
      log.println("check: " + deployment.describe());
      requireKind();
      LockOptions options = settings.watched() ? LockOptions.watched(settings.lease()) : LockOptions.fixed(settings.lease());
      if (settings.backend().usesChildProcesses()) {
        List<Child> first = new ArrayList<>();
        for (int i = 0; i < settings.processes(); i++) {
          first.add(startChild(threadsOf(i)));
        }
        for (Child c : first) {
          c.awaitReady(CHILD_START_TIMEOUT);
        }
      } else {
        List<String> locks = new ArrayList<>();
        for (int i = 0; i < settings.locks(); i++) {
          locks.add("lock-" + i);
        }
        Channel local = new LocalChannel();
        for (int i = 0; i < settings.clients(); i++) {
          LockClient client = deployment.newLocalClient(Clients.options(settings.schedulingAllowance().orElse(null)));
          localClients.add(client);
          Worker w = new Worker("h-t" + i, client, options, locks, settings.acquireWait(), local, localStop::get,
              settings.kind(), Worker.reads(settings.kind(), i));
          localThreads.add(new Thread(w, "check-worker-" + i));
        }
      }
      if (settings.load() > 0) { // once the clients are up: their start-up is not what is measured
        load = LoadMain.start(settings.load(), workDir);
        log.println("check: " + settings.load() + " busy-loop threads run beside the clients (pid " + load.pid() + ")");
      }
      startNanos = System.nanoTime();
      started = true;
      children.forEach(c -> c.send("GO"));
      localThreads.forEach(Thread::start);
      nemesis = new Nemesis(this);
      nemesis.start();
      log.println("check: " + settings.clients() + " clients contend for " + settings.duration().toSeconds()
          + " s; fault: " + settings.fault().cliName());
      long endOfDuration = startNanos + settings.duration().toNanos();
      if (settings.stopsEarly()) { // the duration bounds the run; enough grants and injections end it
        if (history.await(this::enough, endOfDuration)) {
          log.println("check: " + history.grants() + " grants and " + history.heals() + " healed injections after "
              + millisSinceStart(System.nanoTime()) + " ms: ending the run");
        }
      } else {
        Thread.sleep(settings.duration().toMillis()); // the run's length, not synchronization
      }
      nemesis.stopAndJoin(Duration.ofSeconds(90));
      long endNanos = System.nanoTime();
      children.forEach(c -> c.send("STOP"));
      localStop.set(true);
      Duration drain = Duration.ofMillis(register.longestThink()).plus(settings.acquireWait())
          .plus(settings.lease()).plusSeconds(10);
      long drainDeadline = System.nanoTime() + drain.toNanos();
      for (Child c : children) {
        if (!c.isKilled() && !c.awaitExit(Duration.ofNanos(Math.max(1, drainDeadline - System.nanoTime())))) {
          log.println("check: client JVM " + c.index + " did not stop within " + drain.toSeconds() + " s; killed");
        }
      }
      for (Thread t : localThreads) {
        t.join(Math.max(1, (drainDeadline - System.nanoTime()) / 1_000_000));
      }
      List<Event> events = history.snapshot();
      Checkers.Findings findings = Checkers.check(events, endNanos);
      CheckReport report = new CheckReport(settings, deployment.describe(), startNanos, endNanos, events, findings,
          List.copyOf(faultLog), nemesis.error(), Nemesis.outageMillis(settings));
      completed = true;
      return report;
    } catch (InterruptedException e) {
      if (forced.get()) {
        throw new IllegalStateException("the run exceeded its hard deadline of " + settings.duration()
            .plus(HARD_DEADLINE_SLACK).toSeconds() + " s; client logs in " + workDir, e);
      }
      throw e;
    } finally {
      try {
        if (nemesis != null) {
          nemesis.stopAndJoin(Duration.ofSeconds(30));
        }
      } finally { // also when interrupted while joining the nemesis
        cleanUp(localClients, watchdog, completed);
      }
    }
  }

  /**
   * Asks one client of the backend, built as the clients will be, whether it offers the run's lock kind;
   * the exclusive lock every backend offers.
   *
   * @throws SafetyCheck.UnsupportedKindException if it does not, naming the kinds it does
   */
  private void requireKind() {
    if (settings.kind() == io.locksmith.LockKind.EXCLUSIVE) {
      return;
    }
    io.locksmith.Capabilities capabilities;
    try (LockClient probe = settings.backend().usesChildProcesses()
        ? ChildMain.connect(deployment.clientSpec(0), settings.schedulingAllowance().orElse(null))
        : deployment.newLocalClient(Clients.options(settings.schedulingAllowance().orElse(null)))) {
      capabilities = probe.capabilities();
    }
    if (!capabilities.supports(settings.kind())) {
      throw new SafetyCheck.UnsupportedKindException("backend " + settings.backend().cliName() + " ("
          + capabilities.backend() + ") does not offer --kind " + CheckSettings.kindName(settings.kind())
          + "; it offers: " + capabilities.lockKinds().stream().filter(k -> k != io.locksmith.LockKind.SEMAPHORE)
          .sorted().map(CheckSettings::kindName).reduce((a, b) -> a + ", " + b).orElse(""));
    }
  }

  /** Whether a run that stops early has seen what it waits for ({@link CheckSettings.Builder#stopEarly}). */
  private boolean enough() {
    int injections = settings.stopAfterInjections();
    return history.grants() >= settings.stopAfterAcquisitions() && history.heals() >= injections
        && (injections == 0 || history.grantsAfterLastHeal() > 0);
  }

  /** Stops every child, client and server; each step runs even if an earlier one failed. */
  private void cleanUp(List<LockClient> localClients, ScheduledExecutorService watchdog, boolean completed) {
    localStop.set(true);
    try {
      LoadMain.stop(load);
      children.forEach(Child::destroy);
      localClients.forEach(LockClient::close);
    } finally {
      try {
        if (deployment != null) {
          deployment.close();
        }
      } finally {
        watchdog.shutdownNow();
        if (completed) {
          deleteWorkDir();
        } else {
          log.println("check: client JVM logs kept in " + workDir);
        }
      }
    }
  }

  private int threadsOf(int process) {
    int p = settings.processes();
    return settings.clients() / p + (process < settings.clients() % p ? 1 : 0);
  }

  Child startChild(int threads) throws IOException {
    int index = nextChild.getAndIncrement();
    Child c = Child.start(index, threads, deployment.clientSpec(index), settings, history, register, workDir);
    children.add(c);
    return c;
  }

  /** Starts a child with the same number of clients as {@code dead}, and lets it go. */
  Child replace(Child dead) throws IOException, InterruptedException {
    Child c = startChild(dead.clients.size());
    c.awaitReady(CHILD_START_TIMEOUT);
    c.send("GO");
    return c;
  }

  Child childOf(String client) {
    for (Child c : children) {
      if (c.owns(client)) {
        return c;
      }
    }
    return null;
  }

  long millisSinceStart(long nanos) {
    return (nanos - startNanos) / 1_000_000;
  }

  void note(String line) {
    String stamped = "+" + millisSinceStart(System.nanoTime()) + " ms  " + line;
    faultLog.add(stamped);
    log.println("check: " + stamped);
  }

  private void deleteWorkDir() {
    try (var files = Files.list(workDir)) {
      for (Path p : files.toList()) {
        Files.deleteIfExists(p);
      }
      Files.deleteIfExists(workDir);
    } catch (IOException e) {
      // a temp directory left behind is harmless
    }
  }

  /** The in-harness channel: straight to the recorder and the register. */
  private final class LocalChannel implements Channel {
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
  }
}
