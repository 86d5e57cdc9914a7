package io.locksmith.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The hot-key scenario with its threads spread over several JVMs, as several instances of a service
 * would be: starts {@link BenchSettings#processes()} child JVMs ({@link BenchWorker}, on this JVM's class
 * path), each with {@code threads} threads of every implementation and clients of its own, and drives them
 * in step: the same warm-up and alternating slices as {@link Bench#measure}, every JVM running the same
 * implementation at the same time. Reports per-JVM and per-thread cycle counts. Not thread-safe; one
 * run at a time.
 */
final class MultiProcessBench {
  private static final int SLICES = 5;
  /** Time for a child JVM to start and build its clients. */
  private static final Duration START = Duration.ofSeconds(60);
  /** Beyond a window: the 2 s grace of a waiting thread, and a loaded machine's slack. */
  private static final long SLACK_NANOS = 30_000_000_000L;

  private MultiProcessBench() {}

  /**
   * @param uri what the children connect to
   * @param server the server itself, for MONITOR
   * @throws IllegalStateException if a child fails, ends or does not answer in time (its log is named)
   */
  static BenchReport run(BenchSettings s, String uri, String server, String version, PrintStream progress)
      throws Exception {
    int threads = s.effectiveThreads();
    Path logs = Files.createTempDirectory("locksmith-bench-");
    List<Worker> workers = new ArrayList<>();
    try {
      for (int p = 0; p < s.processes(); p++) {
        workers.add(Worker.start(p, uri, s, logs));
      }
      List<String> names = null;
      for (Worker w : workers) {
        String ready = w.await("READY", START.toNanos());
        List<String> these = List.of(ready.split(","));
        if (names != null && !names.equals(these)) {
          throw new IllegalStateException("child JVMs built different implementations: " + names + ", " + these);
        }
        names = these;
      }
      progress.printf("%d JVMs × %d threads ready (logs in %s)%n", workers.size(), threads, logs);
      long sliceNanos = s.duration().toNanos() / SLICES;
      long warmupNanos = Math.min(sliceNanos, 2_000_000_000L);
      for (int i = 0; i < names.size(); i++) {
        progress.printf("warming up %s%n", names.get(i));
        runEverywhere(workers, i, warmupNanos, false);
      }
      for (int slice = 1; slice <= SLICES; slice++) {
        for (int i = 0; i < names.size(); i++) {
          long n = runEverywhere(workers, i, sliceNanos, true);
          progress.printf("slice %d/%d %-22s %d cycles%n", slice, SLICES, names.get(i), n);
        }
      }
      List<BenchResult> results = new ArrayList<>();
      for (int i = 0; i < names.size(); i++) {
        int index = i;
        double[] perOp = Bench.serverCost(List.of(server), Duration.ZERO,
            () -> runEverywhere(workers, index, Math.min(sliceNanos, 1_000_000_000L), false));
        List<WorkerReport> reports = new ArrayList<>();
        for (Worker w : workers) {
          w.send("REPORT " + i);
        }
        for (Worker w : workers) {
          reports.add(WorkerReport.decode(w.await("RESULT", SLACK_NANOS)));
        }
        results.add(WorkerReport.aggregate(names.get(i), reports, perOp));
      }
      for (Worker w : workers) {
        w.send("QUIT");
      }
      for (Worker w : workers) {
        w.end();
      }
      String machine = Runtime.getRuntime().availableProcessors() + " cpus, Java " + System.getProperty("java.version");
      return new BenchReport(s.scenario(), threads, null, s.duration().toMillis(), 0, version, machine, results,
          s.processes());
    } finally {
      for (Worker w : workers) {
        w.kill();
      }
    }
  }

  /** One window of implementation {@code index} in every JVM at once; returns their cycles together. */
  private static long runEverywhere(List<Worker> workers, int index, long nanos, boolean record) {
    for (Worker w : workers) {
      w.send("RUN " + index + " " + nanos + " " + record);
    }
    long cycles = 0;
    for (Worker w : workers) {
      cycles += Long.parseLong(w.await("DONE", nanos + SLACK_NANOS));
    }
    return cycles;
  }

  /** The harness's side of one child JVM. Its answers are queued by a reader thread. */
  private static final class Worker {
    private final int index;
    private final Process process;
    private final Path log;
    private final BlockingQueue<String> answers = new LinkedBlockingQueue<>();

    private Worker(int index, Process process, Path log) {
      this.index = index;
      this.process = process;
      this.log = log;
    }

    static Worker start(int index, String uri, BenchSettings s, Path logs) throws IOException {
      String java = ProcessHandle.current().info().command()
          .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      List<String> cmd = List.of(java, "-Xmx512m", "-cp", System.getProperty("java.class.path"),
          BenchWorker.class.getName(), uri, s.scenario().cliName(), Integer.toString(s.effectiveThreads()),
          s.against().isEmpty() ? "-" : String.join(",", s.against()), Integer.toString(s.minCycles()));
      Path log = logs.resolve("worker-" + index + ".log");
      Process p = new ProcessBuilder(cmd).redirectError(log.toFile()).start();
      Worker w = new Worker(index, p, log);
      Thread reader = new Thread(w::readLoop, "bench-worker-" + index);
      reader.setDaemon(true);
      reader.start();
      return w;
    }

    private void readLoop() {
      try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
          StandardCharsets.UTF_8))) {
        for (String line; (line = in.readLine()) != null; ) {
          if (line.startsWith("@@ ")) {
            answers.add(line.substring(3));
          }
        }
      } catch (IOException e) {
        // the child is gone: reported below as its end
      }
      answers.add("EOF");
    }

    void send(String line) {
      try {
        OutputStream in = process.getOutputStream();
        in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        in.flush();
      } catch (IOException e) {
        throw new IllegalStateException("bench JVM " + index + " is gone; its log: " + log, e);
      }
    }

    /** @return the rest of the next answer, which must start with {@code word} */
    String await(String word, long timeoutNanos) {
      String answer;
      try {
        answer = answers.poll(timeoutNanos, TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted waiting for bench JVM " + index, e);
      }
      if (answer == null || !answer.startsWith(word + " ")) {
        throw new IllegalStateException("bench JVM " + index + " (pid " + process.pid() + ") "
            + (answer == null ? "did not answer within " + Duration.ofNanos(timeoutNanos) : "answered " + answer)
            + " instead of " + word + "; its log: " + log);
      }
      return answer.substring(word.length() + 1);
    }

    void end() throws InterruptedException {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    }

    void kill() {
      if (process.isAlive()) {
        process.destroyForcibly();
      }
    }
  }
}
