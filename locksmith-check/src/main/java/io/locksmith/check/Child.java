package io.locksmith.check;

import io.locksmith.testkit.ProcessSignals;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The harness's handle on one client JVM: starts it, serves its register requests and records its
 * events from a reader thread, and ends it. Thread-safe.
 */
final class Child {
  final int index;
  final List<String> clients;
  private final Process process;
  private final History history;
  private final Register register;
  private final Path log;
  private final CountDownLatch ready = new CountDownLatch(1);
  private volatile String fatal;
  private volatile boolean paused;
  private volatile boolean killed;

  private Child(int index, List<String> clients, Process process, History history, Register register, Path log) {
    this.index = index;
    this.clients = clients;
    this.process = process;
    this.history = history;
    this.register = register;
    this.log = log;
  }

  static Child start(int index, int threads, String spec, CheckSettings s, History history, Register register,
      Path workDir) throws IOException {
    String java = ProcessHandle.current().info().command().orElse(Path.of(System.getProperty("java.home"), "bin",
        "java").toString());
    String prefix = "p" + index;
    List<String> locks = new ArrayList<>();
    for (int i = 0; i < s.locks(); i++) {
      locks.add("lock-" + i);
    }
    List<String> cmd = List.of(java, "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
        "-cp", System.getProperty("java.class.path"), ChildMain.class.getName(), spec, prefix,
        Integer.toString(threads), String.join(",", locks), Long.toString(s.lease().toMillis()),
        Boolean.toString(s.watched()), Long.toString(s.acquireWait().toMillis()),
        s.schedulingAllowance().map(a -> Long.toString(a.toNanos())).orElse("default"), s.kind().name());
    Path log = workDir.resolve("child-" + index + ".log");
    Process p = new ProcessBuilder(cmd).redirectError(log.toFile()).start();
    List<String> clients = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      clients.add(prefix + "-t" + t);
    }
    Child child = new Child(index, List.copyOf(clients), p, history, register, log);
    Thread reader = new Thread(child::readLoop, "check-child-" + index);
    reader.setDaemon(true);
    reader.start();
    return child;
  }

  long pid() {
    return process.pid();
  }

  Path log() {
    return log;
  }

  boolean owns(String client) {
    return clients.contains(client);
  }

  void awaitReady(Duration timeout) throws InterruptedException {
    if (!ready.await(timeout.toMillis(), TimeUnit.MILLISECONDS) || fatal != null) {
      throw new IllegalStateException("client JVM " + index + " (pid " + process.pid() + ") did not start: "
          + (fatal != null ? fatal : "no READY within " + timeout) + "; its log: " + log);
    }
  }

  void send(String line) {
    try {
      OutputStream in = process.getOutputStream();
      synchronized (this) {
        in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        in.flush();
      }
    } catch (IOException e) {
      // the child is gone (killed by a fault, or ended): nothing to deliver
    }
  }

  void pause() {
    ProcessSignals.pause(process.pid());
    paused = true;
  }

  void resume() {
    if (paused) {
      paused = false;
      ProcessSignals.resume(process.pid());
    }
  }

  void kill() {
    killed = true;
    paused = false;
    ProcessSignals.kill9(process.pid());
  }

  boolean isKilled() {
    return killed;
  }

  boolean awaitExit(Duration timeout) throws InterruptedException {
    return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** Ends the process whatever its state; never throws. */
  void destroy() {
    if (process.isAlive()) {
      try {
        resume();
      } catch (RuntimeException e) {
        // it may have died meanwhile
      }
      process.destroyForcibly();
      try {
        process.waitFor(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    try {
      process.getOutputStream().close();
    } catch (IOException e) {
      // already closed
    }
  }

  private void readLoop() {
    try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = r.readLine()) != null; ) {
        handle(line);
      }
    } catch (IOException | RuntimeException e) {
      if (!killed) {
        fatal = "reading its output failed: " + e;
      }
    } finally {
      ready.countDown();
    }
  }

  private void handle(String line) {
    if (line.startsWith("E ")) {
      String[] f = line.split(" ", 8);
      history.add(new Event(Long.parseLong(f[1]), f[2], Event.Op.valueOf(f[3]), Event.Type.valueOf(f[4]), f[5],
          Long.parseLong(f[6]), 0, 0, f.length > 7 ? f[7] : ""));
    } else if (line.startsWith("Q ")) {
      String[] f = line.split(" ");
      String id = f[1];
      if (f[2].equals("R")) {
        Register.ReadResult r = register.read(f[3], f[4], Long.parseLong(f[5]));
        send("A " + id + " " + (r.stale() ? 1 : 0) + " " + r.version() + " " + r.thinkMillis());
      } else if (f[2].equals("P")) {
        send("A " + id + " " + register.peek(f[3], f[4], f[5].equals("1"), Long.parseLong(f[6])));
      } else {
        boolean applied = register.write(f[3], f[4], Long.parseLong(f[5]), Long.parseLong(f[6]));
        send("A " + id + " " + (applied ? 1 : 0));
      }
    } else if (line.equals("READY")) {
      ready.countDown();
    } else if (line.startsWith("FATAL")) {
      fatal = line;
      ready.countDown();
    }
  }
}
