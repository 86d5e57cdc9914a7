package io.locksmith.cli;

import io.locksmith.check.CheckBackend;
import io.locksmith.check.CheckReport;
import io.locksmith.check.CheckSettings;
import io.locksmith.check.Fault;
import io.locksmith.check.SafetyCheck;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.Collectors;

/**
 * {@code locksmith check}: parses the options, runs {@link SafetyCheck}, prints the summary and writes the
 * JSON and HTML reports.
 *
 * <p>Exit codes (also in {@link #help()} and docs/safety.md):
 *
 * <ul>
 *   <li>0: passed: the run was conclusive and no promise was broken (violations the fault is known to
 *       cause, inside its fault windows, are findings, not failures);
 *   <li>1: a promise was broken ({@link CheckReport#brokenPromises()});
 *   <li>2: bad command line, including settings {@link CheckSettings.Builder#build()} rejects;
 *   <li>3: the tool or its infrastructure failed: a backend or client JVM could not start, the run hit
 *       its hard deadline, a fault injection failed;
 *   <li>4: the checker is broken: it missed a violation the run forced (also a failed self-test);
 *   <li>5: inconclusive: the run tested nothing (no grant, or the fault was never injected).
 * </ul>
 */
final class CheckCommand {
  static final int PROMISE_BROKEN = CheckReport.Verdict.PROMISE_BROKEN.exitCode();
  static final int INFRASTRUCTURE_FAILED = CheckReport.Verdict.INFRASTRUCTURE_FAILED.exitCode();
  static final int CHECKER_BROKEN = CheckReport.Verdict.CHECKER_BROKEN.exitCode();
  static final int INCONCLUSIVE = CheckReport.Verdict.INCONCLUSIVE.exitCode();

  private CheckCommand() {}

  static String help() {
    StringBuilder sb = new StringBuilder();
    sb.append("usage: locksmith check --backend B --fault F [--kind exclusive|fair|read-write] [--fenced|--unfenced]\n")
        .append("         [--clients N] [--processes N] [--locks M] [--duration 30s] [--lease 2s] [--fixed-lease] [--load N]\n")
        .append("         [--scheduling-allowance 25ms] [--json FILE] [--html FILE]\n")
        .append("       locksmith check --self-test [--duration 10s] [--json FILE] [--html FILE]\n\n")
        .append("Starts the backend on loopback, runs N clients (threads in child JVMs) that read, think and write a\n")
        .append("register under M locks, injects the fault, and checks the recorded history. --load N runs N\n")
        .append("CPU-bound busy-loop threads beside the clients; --scheduling-allowance builds the clients with that\n")
        .append("allowance (0 for the clock-drift allowance alone; default: the clients' default).\n")
        .append("--kind: the lock the clients take: exclusive (default), fair (LockClient.fairLock), or read-write:\n")
        .append("writers take the write side and write the register, every second client of a JVM takes the read\n")
        .append("side and only looks at the register twice per hold; a write between its looks is reported\n")
        .append("(writesUnderReadHolds). A backend whose clients do not offer the kind is a usage error (exit 2).\n")
        .append("\nbackends:\n");
    for (CheckBackend b : CheckBackend.values()) {
      sb.append(String.format("  %-9s %s; faults: %s%n", b.cliName(), b.description(),
          b.supportedFaults().stream().sorted().map(Fault::cliName).collect(Collectors.joining(", "))));
    }
    sb.append("faults:\n");
    for (Fault f : Fault.values()) {
      sb.append(String.format("  %-16s %s%n", f.cliName(), f.description()));
    }
    sb.append("exit: 0 passed (conclusive, no promise broken; violations inside a fault's windows are findings)\n")
        .append("      1 a promise was broken (a violation the backend must not show under this fault, a token\n")
        .append("        regression where the counter survives, a lost or stale write despite fencing)\n")
        .append("      2 bad command line (including a --duration too short for one injection of the fault)\n")
        .append("      3 the tool or its infrastructure failed (backend or client JVM did not start, deadline,\n")
        .append("        fault injection failed)\n")
        .append("      4 the checker is broken (it missed a violation it forced; a failed --self-test)\n")
        .append("      5 inconclusive: the run tested nothing (no grant, or the fault was never injected)");
    return sb.toString();
  }

  static int run(Args args, PrintStream out) throws Exception {
    if (args.flag("help")) {
      out.println(help());
      return 0;
    }
    if (args.flag("fenced") && args.flag("unfenced")) {
      throw new Args.UsageException("--fenced and --unfenced exclude each other");
    }
    if (args.flag("self-test")) {
      return selfTest(args, out);
    }
    String backend = args.get("backend", null);
    String fault = args.get("fault", null);
    if (backend == null || fault == null) {
      throw new Args.UsageException("check needs --backend and --fault (see locksmith check --help)");
    }
    CheckSettings settings;
    try {
      CheckBackend b = CheckBackend.parse(backend);
      CheckSettings.Builder builder = CheckSettings.builder(b, Fault.parse(fault))
          .fenced(args.flag("fenced"))
          .kind(CheckSettings.parseKind(args.get("kind", "exclusive")))
          .clients(args.intValue("clients", 4, 1, 64))
          .locks(args.intValue("locks", 2, 1, 64))
          .duration(args.duration("duration", Duration.ofSeconds(30)))
          .lease(args.duration("lease", Duration.ofSeconds(2)), !args.flag("fixed-lease"));
      if (b.usesChildProcesses()) {
        builder.processes(args.intValue("processes", 2, 2, 16));
      }
      builder.load(args.intValue("load", 0, 0, 16));
      String allowance = args.get("scheduling-allowance", null);
      if (allowance != null) { // 0 is a valid allowance here, which Args.duration refuses
        builder.schedulingAllowance(allowance.matches("0+(us|ms|s)?") ? Duration.ZERO
            : args.duration("scheduling-allowance", null));
      }
      settings = builder.build();
    } catch (IllegalArgumentException e) {
      throw new Args.UsageException(e.getMessage());
    }
    CheckReport report;
    try {
      report = SafetyCheck.run(settings, out);
    } catch (SafetyCheck.UnsupportedKindException e) {
      throw new Args.UsageException(e.getMessage());
    } catch (RuntimeException | InterruptedException e) {
      return infrastructureFailed(e, out);
    }
    write(report, args, out);
    CheckReport.Verdict verdict = report.verdict();
    switch (verdict) {
      case CHECKER_BROKEN -> out.println("locksmith check: the checker is broken: it saw no violation where paused"
          + " holders forced one");
      case INFRASTRUCTURE_FAILED -> out.println("locksmith check: infrastructure failed: " + report.nemesisError());
      case INCONCLUSIVE -> out.println("locksmith check: inconclusive: " + String.join("; ",
          report.inconclusiveReasons()));
      case PROMISE_BROKEN -> out.println("locksmith check: a promise was broken");
      case PASSED -> { }
    }
    return verdict.exitCode();
  }

  private static int infrastructureFailed(Exception e, PrintStream out) {
    if (e instanceof InterruptedException) {
      Thread.currentThread().interrupt();
    }
    out.println("locksmith check: infrastructure failed, nothing was checked: " + e);
    return INFRASTRUCTURE_FAILED;
  }

  private static int selfTest(Args args, PrintStream out) throws Exception {
    Duration duration = args.duration("duration", Duration.ofSeconds(10));
    if (duration.compareTo(Duration.ofSeconds(6)) < 0) {
      throw new Args.UsageException("--self-test needs --duration of at least 6s");
    }
    SafetyCheck.SelfTest t;
    try {
      t = SafetyCheck.selfTest(duration, out);
    } catch (RuntimeException | InterruptedException e) {
      return infrastructureFailed(e, out);
    }
    for (CheckReport r : t.reports()) {
      out.print(r.toTable());
    }
    String json = args.get("json", null);
    if (json != null) {
      String body = t.reports().stream().map(CheckReport::toJson).collect(Collectors.joining(",\n", "[\n", "]\n"));
      Files.writeString(Path.of(json), body, StandardCharsets.UTF_8);
      out.println("wrote " + json);
    }
    String html = args.get("html", null);
    if (html != null) {
      Files.writeString(Path.of(html), t.reports().get(0).toHtml(), StandardCharsets.UTF_8);
      out.println("wrote " + html + " (the unfenced run)");
    }
    if (t.passed()) {
      out.println("self-test passed: the checker sees the violations paused holders cause, and fencing rejects "
          + "their stale writes");
      return 0;
    }
    t.problems().forEach(p -> out.println("self-test FAILED: " + p));
    return CHECKER_BROKEN;
  }

  private static void write(CheckReport report, Args args, PrintStream out) throws IOException {
    out.print(report.toTable());
    String json = args.get("json", null);
    if (json != null) {
      Files.writeString(Path.of(json), report.toJson(), StandardCharsets.UTF_8);
      out.println("wrote " + json);
    }
    String html = args.get("html", null);
    if (html != null) {
      Files.writeString(Path.of(html), report.toHtml(), StandardCharsets.UTF_8);
      out.println("wrote " + html);
    }
  }
}
