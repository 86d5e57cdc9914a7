package io.locksmith.bench;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The main class of a multi-process run's child JVM: builds the same implementations as the harness
 * ({@link Bench#implementations}) against the given server, then runs what the harness asks on its
 * standard input, one command a line, and answers on its standard output, lines starting with {@code @@}
 * (anything a library prints goes to standard error instead):
 * <ul>
 *   <li>{@code RUN <impl index> <nanos> <record>}: one window of the workload, answered by
 *       {@code @@ DONE <cycles>} (cycles completed, window or not);</li>
 *   <li>{@code REPORT <impl index>}: what the recorded windows saw, {@code @@ RESULT <}{@link WorkerReport}{@code >};</li>
 *   <li>{@code QUIT}: close everything and end.</li>
 * </ul>
 * A failure is answered by {@code @@ FAILED <message>} and ends the JVM. Single-threaded (its workloads'
 * threads aside); one harness per JVM.
 */
public final class BenchWorker {
  private BenchWorker() {}

  /**
   * @param args the server URI, the scenario, threads, the peers ({@code -} for none), comma-separated, and
   *     {@link BenchSettings#minCycles()}
   * @throws Exception if the implementations cannot be built (then the JVM ends non-zero)
   */
  public static void main(String[] args) throws Exception {
    PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
    System.setOut(System.err); // the protocol owns standard output
    List<AutoCloseable> owned = new ArrayList<>();
    int code = 0;
    try {
      if (args.length != 5) {
        throw new IllegalArgumentException("usage: BenchWorker <uri> <scenario> <threads> <peers|-> <minCycles>");
      }
      int minCycles = Integer.parseInt(args[4]);
      String uri = args[0];
      Scenario scenario = Scenario.parse(args[1]);
      int threads = Integer.parseInt(args[2]);
      List<String> against = args[3].equals("-") ? List.of() : List.of(args[3].split(","));
      BenchSettings settings = new BenchSettings(scenario, against, Duration.ofSeconds(1), threads, uri, List.of());
      List<LockImpl> impls = new ArrayList<>(Bench.implementationsPatiently(settings, uri, List.of(), owned).keySet());
      List<Workload> workloads = new ArrayList<>();
      List<String> names = new ArrayList<>();
      for (LockImpl impl : impls) {
        workloads.add(new Workload(scenario, threads, 0, minCycles));
        names.add(impl.name());
      }
      out.println("@@ READY " + String.join(",", names));
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      for (String line; (line = in.readLine()) != null; ) {
        String[] f = line.trim().split(" ");
        switch (f[0]) {
          case "RUN" -> {
            int i = Integer.parseInt(f[1]);
            out.println("@@ DONE " + workloads.get(i).run(impls.get(i), Long.parseLong(f[2]),
                Boolean.parseBoolean(f[3])));
          }
          case "REPORT" -> out.println("@@ RESULT " + WorkerReport.of(workloads.get(Integer.parseInt(f[1]))).encode());
          case "QUIT" -> {
            return;
          }
          default -> throw new IllegalArgumentException("unknown command: " + line);
        }
      }
    } catch (Exception e) {
      out.println("@@ FAILED " + String.valueOf(e).replace('\n', ' '));
      e.printStackTrace();
      code = 1;
    } finally {
      for (int i = owned.size() - 1; i >= 0; i--) {
        try {
          owned.get(i).close();
        } catch (Exception e) {
          System.err.println("closing " + owned.get(i) + ": " + e);
        }
      }
      // some clients leave non-daemon threads behind
      System.exit(code);
    }
  }
}
