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
        String table;
        try {
          table = io.locksmith.bench.JdbcBench.handOff(backend, rounds, out).table();
        } catch (IllegalArgumentException e) {
          throw new Args.UsageException(e.getMessage());
        }
        out.print(table);
        String json = args.get("json", null);
        if (json != null) {
          Files.writeString(Path.of(json), table, StandardCharsets.UTF_8);
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
    if (!backend.equals("redis")) {
      throw new Args.UsageException("--backend must be redis, postgres or mariadb, was '" + backend + "'");
    }
    BenchSettings settings;
    try {
      settings = new BenchSettings(Scenario.parse(scenarioName), list(args.get("against",
          String.join(",", BenchSettings.PEERS))), args.duration("duration", Duration.ofSeconds(10)),
          args.intValue("threads", 0, 1, 10_000), args.get("uri", null), list(args.get("nodes", "")),
          args.duration("rtt", Duration.ZERO));
    } catch (IllegalArgumentException e) {
      throw new Args.UsageException(e.getMessage());
    }
    return print(Bench.run(settings, out), args, out);
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

  private static List<String> list(String csv) {
    return Arrays.stream(csv.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList();
  }
}
