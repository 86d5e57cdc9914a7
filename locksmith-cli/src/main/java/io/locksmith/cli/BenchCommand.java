package io.locksmith.cli;

import io.locksmith.bench.Bench;
import io.locksmith.bench.BenchReport;
import io.locksmith.bench.BenchSettings;
import io.locksmith.bench.Scenario;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

/** {@code locksmith bench}: parses the options, runs {@link Bench}, prints the table, writes the JSON. */
final class BenchCommand {
  private BenchCommand() {}

  static int run(Args args, PrintStream out) throws Exception {
    String scenarioName = args.get("scenario", null);
    if (scenarioName == null) {
      throw new Args.UsageException("bench needs --scenario");
    }
    String backend = args.get("backend", "redis");
    if (io.locksmith.bench.JdbcBench.DATABASES.contains(backend)) {
      if (args.get("uri", null) != null || args.get("nodes", null) != null || args.get("rtt", null) != null) {
        throw new Args.UsageException("--backend " + backend + " starts its own database: no --uri, --nodes or --rtt");
      }
      if (scenarioName.equals("hand-off")) {
        int rounds = args.intValue("threads", 20, 3, 1000); // --threads: rounds for this scenario
        io.locksmith.bench.JdbcBench.HandOffReport handOff;
        try {
          handOff = io.locksmith.bench.JdbcBench.handOff(backend, rounds, out);
        } catch (IllegalArgumentException e) {
          throw new Args.UsageException(e.getMessage());
        }
        out.print(handOff.table());
        String json = args.get("json", null);
        if (json != null) {
          Files.writeString(Path.of(json), handOff.toJson(), StandardCharsets.UTF_8);
          out.println("wrote " + json);
        }
        return 0;
      }
      BenchReport report;
      try {
        BenchSettings settings = new BenchSettings(Scenario.parse(scenarioName), List.of(),
            args.duration("duration", Duration.ofSeconds(10)), args.intValue("threads", 0, 1, 10_000), null, List.of());
        report = io.locksmith.bench.JdbcBench.run(backend, settings, list(args.get("against",
            String.join(",", io.locksmith.bench.JdbcBench.PEERS))), out);
      } catch (IllegalArgumentException e) {
        throw new Args.UsageException(e.getMessage());
      }
      return print(report, args, out);
    }
    if (!backend.equals("redis") && !backend.equals("zookeeper")) {
      throw new Args.UsageException("--backend must be redis, zookeeper, postgres or mariadb, was '" + backend + "'");
    }
    Scenario scenario;
    double readRatio = BenchSettings.DEFAULT_READ_RATIO;
    BenchSettings settings;
    try {
      scenario = Scenario.parse(scenarioName);
      String ratio = args.get("read-ratio", null);
      if (ratio != null) {
        if (scenario != Scenario.RW_MIX) {
          throw new Args.UsageException("--read-ratio applies to --scenario rw-mix only");
        }
        try {
          readRatio = Double.parseDouble(ratio);
        } catch (NumberFormatException e) {
          throw new Args.UsageException("--read-ratio must be a number between 0 and 1, was '" + ratio + "'");
        }
      }
      boolean zookeeper = "zookeeper".equals(args.get("backend", "redis"));
      settings = new BenchSettings(scenario, zookeeper ? List.of() : list(args.get("against",
          String.join(",", BenchSettings.PEERS))), args.duration("duration", Duration.ofSeconds(10)),
          args.intValue("threads", 0, 1, 10_000), args.get("uri", null), list(args.get("nodes", "")),
          args.duration("rtt", Duration.ZERO), readRatio, counts(args.get("segments", null)),
          "0".equals(args.get("hold", null)) ? Duration.ZERO // no work under the lock at all
              : args.duration("hold", BenchSettings.DEFAULT_HOLD),
          args.intValue("processes", 1, 1, BenchSettings.MAX_PROCESSES));
      if (settings.processes() > 1 && zookeeper) {
        throw new Args.UsageException("--processes applies to the Redis backend only");
      }
    } catch (IllegalArgumentException e) {
      throw new Args.UsageException(e.getMessage());
    }
    BenchReport report;
    if (backend.equals("zookeeper")) {
      try {
        report = io.locksmith.bench.ZooKeeperBench.run(settings, list(args.get("against",
            String.join(",", io.locksmith.bench.ZooKeeperBench.PEERS))), out);
      } catch (IllegalArgumentException e) {
        throw new Args.UsageException(e.getMessage());
      }
    } else {
      report = Bench.run(settings, out);
    }
    return print(report, args, out);
  }

  private static int print(BenchReport report, Args args, PrintStream out) throws Exception {
    out.print(report.toTable());
    String json = args.get("json", null);
    if (json != null) {
      Files.writeString(Path.of(json), report.toJson(), StandardCharsets.UTF_8);
      out.println("wrote " + json);
    }
    return 0;
  }

  /** {@code --segments 1,5,20}: the segment counts of the segmented scenario. */
  private static List<Integer> counts(String csv) {
    if (csv == null) {
      return BenchSettings.DEFAULT_SEGMENTS;
    }
    try {
      return list(csv).stream().map(Integer::valueOf).toList();
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("--segments takes counts like 1,5,20, was '" + csv + "'");
    }
  }

  private static List<String> list(String csv) {
    return Arrays.stream(csv.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList();
  }
}
