package io.locksmith.bench;

import java.util.List;
import java.util.Locale;

/**
 * One run's results, renderable as the JSON contract of {@code locksmith bench --json} and as a table.
 *
 * @param scenario what was run
 * @param threads threads (waiters, for the herd) per implementation
 * @param readers the rw-mix scenario: how many of the threads only read (the others only write); null
 *     otherwise
 * @param durationMillis measured time per implementation (warm-up excluded)
 * @param rttMicros round-trip time added to every client-server link, 0 for none
 * @param redisVersion version of the server measured against
 * @param machine processors and JVM, for the record
 * @param results one per implementation, in the order they were given
 * @param processes JVMs the threads ran in ({@code threads} in each); 1 for a run in one JVM
 */
public record BenchReport(Scenario scenario, int threads, Integer readers, long durationMillis, long rttMicros,
    String redisVersion, String machine, List<BenchResult> results, int processes) {

  /** A run in one JVM. */
  public BenchReport(Scenario scenario, int threads, Integer readers, long durationMillis, long rttMicros,
      String redisVersion, String machine, List<BenchResult> results) {
    this(scenario, threads, readers, durationMillis, rttMicros, redisVersion, machine, results, 1);
  }

  /** @return the JSON document: {@code {"scenario": …, "results": [{"impl": …, …}, …], …}} */
  public String toJson() {
    StringBuilder b = new StringBuilder();
    b.append("{\n  \"scenario\": \"").append(scenario.cliName()).append("\",\n");
    b.append("  \"threads\": ").append(threads).append(",\n");
    if (processes > 1) {
      b.append("  \"processes\": ").append(processes).append(",\n");
    }
    if (readers != null) {
      b.append("  \"readers\": ").append(readers).append(",\n");
    }
    b.append("  \"durationMillis\": ").append(durationMillis).append(",\n");
    b.append("  \"rttMicros\": ").append(rttMicros).append(",\n");
    b.append("  \"redisVersion\": \"").append(redisVersion).append("\",\n");
    b.append("  \"machine\": \"").append(machine.replace("\"", "'")).append("\",\n");
    b.append("  \"results\": [");
    for (int i = 0; i < results.size(); i++) {
      BenchResult r = results.get(i);
      b.append(i == 0 ? "\n" : ",\n").append("    {\"impl\": \"").append(r.impl()).append('"');
      field(b, "opsPerSec", r.opsPerSec());
      field(b, "p50Micros", r.p50Micros());
      field(b, "p99Micros", r.p99Micros());
      field(b, "acquireP50Micros", r.acquireP50Micros());
      field(b, "serverCommandsPerOp", r.serverCommandsPerOp());
      field(b, "wakeupsPerOp", r.wakeupsPerOp());
      field(b, "serverMicrosPerOp", r.serverMicrosPerOp());
      field(b, "serverCallsPerOp", r.serverCallsPerOp());
      field(b, "handoffP50Micros", r.handoffP50Micros());
      field(b, "handoffP99Micros", r.handoffP99Micros());
      field(b, "minThreadOps", r.minThreadOps());
      field(b, "maxThreadOps", r.maxThreadOps());
      field(b, "abandonedWaits", r.abandonedWaits());
      if (r.processOps() != null) {
        field(b, "minProcessOps", r.minProcessOps());
        field(b, "maxProcessOps", r.maxProcessOps());
        b.append(", \"processOps\": ").append(r.processOps());
      }
      if (r.sides() != null) {
        b.append(", \"reads\": ");
        side(b, r.sides().reads());
        b.append(", \"writes\": ");
        side(b, r.sides().writes());
      }
      b.append('}');
    }
    return b.append("\n  ]\n}\n").toString();
  }

  private static void side(StringBuilder b, BenchResult.Side s) {
    b.append("{\"threads\": ").append(s.threads());
    field(b, "cycles", s.cycles());
    field(b, "perSec", s.perSec());
    field(b, "minThreadOps", s.minThreadOps());
    field(b, "maxThreadOps", s.maxThreadOps());
    field(b, "acquireP99Micros", s.acquireP99Micros());
    field(b, "acquireMaxMicros", s.acquireMaxMicros());
    b.append('}');
  }

  private static void field(StringBuilder b, String name, Number value) {
    b.append(", \"").append(name).append("\": ");
    if (value == null) {
      b.append("null");
    } else if (value instanceof Long l) {
      b.append(l);
    } else {
      b.append(String.format(Locale.ROOT, "%.2f", value.doubleValue()));
    }
  }

  /** @return a fixed-width table for a terminal */
  public String toTable() {
    StringBuilder b = new StringBuilder();
    b.append(String.format(Locale.ROOT, "scenario %s, %s thread(s), %d ms measured per implementation, "
        + "%s, %s%s%n", scenario.cliName(), processes > 1 ? processes + " JVMs × " + threads : Integer.toString(threads),
        durationMillis,
        // a database or ZooKeeper run names its server itself (a ZooKeeper run's cmds/op are requests and
        // its pubs/op watch notifications)
        redisVersion.startsWith("PostgreSQL") || redisVersion.startsWith("MariaDB")
            || redisVersion.startsWith("ZooKeeper") ? redisVersion
            : "Redis " + redisVersion, machine,
        rttMicros == 0 ? "" : ", " + rttMicros + " µs round trip added to every server link"));
    b.append(String.format(Locale.ROOT, "%-22s %12s %10s %10s %11s %9s %9s %9s %9s %11s %11s %s%n", "impl",
        "ops/s", "p50 µs", "p99 µs", "acq p50 µs", "cmds/op", "pubs/op", "srv µs/op", "calls/op", "handoff p50",
        "handoff p99", "min/max per thread"));
    for (BenchResult r : results) {
      b.append(String.format(Locale.ROOT, "%-22s %12.0f %10s %10s %11s %9s %9s %9s %9s %11s %11s %s%n", r.impl(),
          r.opsPerSec(), num(r.p50Micros(), 0), num(r.p99Micros(), 0), num(r.acquireP50Micros(), 0),
          num(r.serverCommandsPerOp(), 2),
          num(r.wakeupsPerOp(), 2), num(r.serverMicrosPerOp(), 1), num(r.serverCallsPerOp(), 2),
          num(r.handoffP50Micros(), 0), num(r.handoffP99Micros(), 0),
          r.minThreadOps() == null ? "-" : r.minThreadOps() + "/" + r.maxThreadOps()));
    }
    if (scenario == Scenario.SEGMENTED && !results.isEmpty()) {
      BenchResult base = results.get(0);
      for (BenchResult r : results.subList(1, results.size())) {
        b.append(String.format(Locale.ROOT, "%s: %.1f× the sales per second of %s%n", r.impl(),
            r.opsPerSec() / base.opsPerSec(), base.impl()));
      }
    }
    for (BenchResult r : results) {
      if (r.sides() != null) {
        b.append(String.format(Locale.ROOT, "%-22s %s%n%-22s %s%n", r.impl(), sideLine("reads ", r.sides().reads()),
            "", sideLine("writes", r.sides().writes())));
      }
    }
    for (BenchResult r : results) {
      if (r.processOps() != null) {
        b.append(String.format(Locale.ROOT, "%-22s cycles per JVM %s, min/max per JVM %d/%d%n", r.impl(),
            r.processOps(), r.minProcessOps(), r.maxProcessOps()));
      }
    }
    for (BenchResult r : results) {
      if (r.abandonedWaits() > 0) {
        b.append(String.format(Locale.ROOT, "%s: %d waiting thread(s) gave up 2 s after a window closed%n",
            r.impl(), r.abandonedWaits()));
      }
    }
    return b.toString();
  }

  private static String sideLine(String what, BenchResult.Side s) {
    return String.format(Locale.ROOT, "%s %d thread(s): %d cycles (%.0f/s), min/max per thread %d/%d, "
        + "acquire p99 %s µs, longest %s µs", what, s.threads(), s.cycles(), s.perSec(), s.minThreadOps(),
        s.maxThreadOps(), num(s.acquireP99Micros(), 0), num(s.acquireMaxMicros(), 0));
  }

  private static String num(Double d, int decimals) {
    return d == null ? "-" : String.format(Locale.ROOT, "%." + decimals + "f", d);
  }
}
