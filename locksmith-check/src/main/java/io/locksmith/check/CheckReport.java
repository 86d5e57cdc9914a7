package io.locksmith.check;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The outcome of one run: the figures of the JSON contract, a verdict, and renderings as a table, JSON
 * and a self-contained HTML page. Immutable and thread-safe.
 *
 * <p>All durations are milliseconds on the monotonic clock, relative to the start of contention.
 */
public final class CheckReport {
  private final CheckSettings settings;
  private final String deployment;
  private final long durationMillis;
  private final Checkers.Findings f;
  private final List<Event> events;
  private final long startNanos;
  private final List<String> faultLog;
  private final String nemesisError;
  private final long unavailableBoundMillis;

  CheckReport(CheckSettings settings, String deployment, long startNanos, long endNanos, List<Event> events,
      Checkers.Findings findings, List<String> faultLog, Exception nemesisError, long outageMillis) {
    this.settings = settings;
    this.deployment = deployment;
    this.startNanos = startNanos;
    this.durationMillis = (endNanos - startNanos) / 1_000_000;
    this.events = events;
    this.f = findings;
    this.faultLog = faultLog;
    this.nemesisError = nemesisError == null ? null : nemesisError.toString();
    this.unavailableBoundMillis = outageMillis + settings.lease().toMillis() + 2_000;
  }

  /** @return the settings of the run */
  public CheckSettings settings() {
    return settings;
  }

  /** @return how long clients contended, measured */
  public long durationMillis() {
    return durationMillis;
  }

  /** @return successful acquisitions (grants) */
  public int acquisitions() {
    return f.acquisitions();
  }

  /** @return pairs of holds of one lock whose conservative intervals intersect */
  public int overlaps() {
    return f.overlaps().size();
  }

  /**
   * @return the longest time one hold was overlapped by other holds of its lock (the union of its
   *     intersections with them)
   */
  public long maxOverlapMillis() {
    return f.maxOverlapNanos() / 1_000_000;
  }

  /** @return accepted register writes later overwritten by a writer that had not read them */
  public int lostUpdates() {
    return f.lostUpdates();
  }

  /** @return grants whose token was not larger than a definitely earlier grant's */
  public int tokenRegressions() {
    return f.regressions().size();
  }

  /** @return accepted writes by a holder already superseded at the register */
  public int staleWritesAccepted() {
    return f.staleWritesAccepted();
  }

  /** @return writes the fence guard refused as stale */
  public int staleWritesRejected() {
    return f.staleWritesRejected();
  }

  /** @return the longest gap between grants of one lock touching a fault (or at all, without faults) */
  public long maxUnavailableMillis() {
    return f.maxUnavailableNanos() / 1_000_000;
  }

  /** @return the expected bound on {@link #maxUnavailableMillis()}: the fault's outage + lease + 2 s */
  public long unavailableBoundMillis() {
    return unavailableBoundMillis;
  }

  /** @return injections recorded (fault windows) */
  public int faultsInjected() {
    return f.faults().size();
  }

  /** @return the fault injector's failure, if it failed */
  public String nemesisError() {
    return nemesisError;
  }

  /**
   * Whether the run showed what the checker must see to be trusted: an unfenced {@code pause-holder} run
   * must report overlaps and lost updates. Other runs return true.
   *
   * @return false if the checker missed a violation the run forced
   */
  public boolean checkerSawForcedViolation() {
    if (settings.fault() != Fault.PAUSE_HOLDER || settings.fenced() || faultsInjected() == 0) {
      return true;
    }
    return overlaps() > 0 && lostUpdates() > 0;
  }

  /**
   * Violations of what Locksmith promises for this backend and fault: any violation without a fault
   * (or with faults the backend tolerates: {@code kill-minority}, {@code expire-minority},
   * {@code reset-link}), and with fencing any lost update or accepted stale write.
   *
   * @return descriptions of broken promises; empty if none
   */
  public List<String> brokenPromises() {
    List<String> broken = new ArrayList<>();
    boolean tolerated = switch (settings.fault()) {
      case NONE, KILL_MINORITY, EXPIRE_MINORITY, RESET_LINK -> true;
      default -> false;
    };
    if (tolerated) {
      if (overlaps() > 0) {
        broken.add(overlaps() + " overlapping holds under " + settings.fault().cliName());
      }
      if (lostUpdates() > 0) {
        broken.add(lostUpdates() + " lost updates under " + settings.fault().cliName());
      }
      if (tokenRegressions() > 0) {
        broken.add(tokenRegressions() + " token regressions under " + settings.fault().cliName());
      }
    }
    if (settings.fenced() && tokenRegressions() == 0) {
      if (lostUpdates() > 0) {
        broken.add(lostUpdates() + " lost updates despite fencing");
      }
      if (staleWritesAccepted() > 0) {
        broken.add(staleWritesAccepted() + " stale writes accepted despite fencing");
      }
    }
    if (nemesisError != null) {
      broken.add("fault injection failed: " + nemesisError);
    }
    return broken;
  }

  private Map<String, Object> fields() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("backend", settings.backend().cliName());
    m.put("fault", settings.fault().cliName());
    m.put("fenced", settings.fenced());
    m.put("durationMillis", durationMillis);
    m.put("acquisitions", acquisitions());
    m.put("overlaps", overlaps());
    m.put("maxOverlapMillis", maxOverlapMillis());
    m.put("lostUpdates", lostUpdates());
    m.put("tokenRegressions", tokenRegressions());
    m.put("staleWritesAccepted", staleWritesAccepted());
    m.put("staleWritesRejected", staleWritesRejected());
    m.put("maxUnavailableMillis", maxUnavailableMillis());
    m.put("unavailableBoundMillis", unavailableBoundMillis);
    m.put("staleReadsRejected", f.staleReadsRejected());
    m.put("writesAccepted", f.writesAccepted());
    m.put("acquireTimeouts", f.acquireFailures());
    m.put("acquireIndeterminate", f.acquireIndeterminate());
    m.put("releasesFoundLost", f.releasesLost());
    m.put("maxGapMillis", f.maxGapNanos() / 1_000_000);
    m.put("faultsInjected", faultsInjected());
    m.put("clients", settings.clients());
    m.put("processes", settings.processes());
    m.put("locks", settings.locks());
    m.put("leaseMillis", settings.lease().toMillis());
    m.put("leaseMode", settings.watched() ? "watched" : "fixed");
    m.put("deployment", deployment);
    m.put("events", events.size());
    m.put("checkerSawForcedViolation", checkerSawForcedViolation());
    m.put("brokenPromises", brokenPromises());
    m.put("faultLog", faultLog);
    return m;
  }

  /** @return the report as one JSON object (the contract fields first) */
  public String toJson() {
    StringBuilder sb = new StringBuilder("{\n");
    var it = fields().entrySet().iterator();
    while (it.hasNext()) {
      var e = it.next();
      sb.append("  ").append(Html.jsonString(e.getKey())).append(": ").append(jsonValue(e.getValue()));
      sb.append(it.hasNext() ? ",\n" : "\n");
    }
    return sb.append("}\n").toString();
  }

  private static String jsonValue(Object v) {
    if (v instanceof List<?> list) {
      StringBuilder sb = new StringBuilder("[");
      for (int i = 0; i < list.size(); i++) {
        sb.append(i == 0 ? "" : ", ").append(Html.jsonString(String.valueOf(list.get(i))));
      }
      return sb.append(']').toString();
    }
    if (v instanceof Number || v instanceof Boolean) {
      return v.toString();
    }
    return v == null ? "null" : Html.jsonString(v.toString());
  }

  /** @return a human summary table (Markdown) */
  public String toTable() {
    StringBuilder sb = new StringBuilder();
    sb.append("\n").append(settings).append("\n").append(deployment).append("\n\n");
    sb.append("| measure | value |\n|---|---:|\n");
    for (var e : fields().entrySet()) {
      Object v = e.getValue();
      if (v instanceof Number || v instanceof Boolean) {
        sb.append("| ").append(e.getKey()).append(" | ").append(v).append(" |\n");
      }
    }
    sb.append('\n');
    faultLog.forEach(l -> sb.append("  ").append(l).append('\n'));
    if (!checkerSawForcedViolation()) {
      sb.append("CHECKER BROKEN: holders were paused past their leases without fencing, yet no overlap or lost"
          + " update was seen\n");
    }
    brokenPromises().forEach(b -> sb.append("VIOLATION: ").append(b).append('\n'));
    return sb.toString();
  }

  /** @return a self-contained HTML page: the figures, a timeline of holds per client, the token sequence */
  public String toHtml() {
    return Html.render(this, fields(), f, events, startNanos);
  }
}
