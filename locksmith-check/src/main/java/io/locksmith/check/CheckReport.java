package io.locksmith.check;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

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

  /** @return the run's history, in order (tests) */
  List<Event> events() {
    return events;
  }

  /**
   * @return read-write runs: writes the register applied while a reader held the read side (between its
   *     two looks in one hold); 0 for the other kinds
   */
  public int writesUnderReadHolds() {
    return f.writesUnderReadHolds().size();
  }

  /**
   * @return writes under read holds ({@link #writesUnderReadHolds()}) whose read hold touches no fault
   *     window (all of them for the fault {@code none})
   */
  long writesUnderReadHoldsOutsideFaultWindows() {
    return f.writesUnderReadHolds().stream()
        .filter(w -> f.faults().stream().noneMatch(window -> window.touches(w.asHold()))).count();
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
   * Whether a {@code pause-holder} injection forced a violation, read from the history: another client
   * was granted a paused victim's lock during the pause.
   *
   * @return true if some pause forced one; false for other faults
   */
  public boolean pauseForcedViolation() {
    if (settings.fault() != Fault.PAUSE_HOLDER) {
      return false;
    }
    for (Checkers.FaultWindow w : f.faults()) {
      if (w.victim() != null && f.holds().stream().anyMatch(h -> grantedDuringPause(w, h))) {
        return true;
      }
    }
    return false;
  }

  private static boolean grantedDuringPause(Checkers.FaultWindow w, Checkers.Hold h) {
    return h.lock().equals(w.victimLock()) && !h.client().equals(w.victim()) && h.startNanos() > w.startNanos()
        && h.startNanos() < w.endNanos();
  }

  private static boolean isVictimHold(Checkers.FaultWindow w, Checkers.Hold h) {
    return h.client().equals(w.victim()) && h.lock().equals(w.victimLock()) && h.startNanos() <= w.startNanos()
        && h.endNanos() >= w.startNanos();
  }

  /**
   * Whether the run showed what the checker must see to be trusted: in an unfenced {@code pause-holder}
   * run where a pause forced a violation ({@link #pauseForcedViolation()}), the checker must report an
   * overlap of the paused victim's hold with a hold granted during the pause, and a lost update. Other
   * runs, and runs where no pause forced anything (those are inconclusive), return true.
   *
   * @return false if the checker missed a violation the run forced
   */
  public boolean checkerSawForcedViolation() {
    if (settings.fault() != Fault.PAUSE_HOLDER || settings.fenced() || !pauseForcedViolation()) {
      return true;
    }
    boolean overlapSeen = f.overlaps().stream().anyMatch(o -> f.faults().stream().anyMatch(w -> w.victim() != null
        && (isVictimHold(w, o.first()) && grantedDuringPause(w, o.second())
            || isVictimHold(w, o.second()) && grantedDuringPause(w, o.first()))));
    return overlapSeen && lostUpdates() > 0;
  }

  /**
   * What Locksmith promises for a backend under a fault, for {@link #brokenPromises()}.
   *
   * <ul>
   *   <li>{@link #CLEAN}: the fault must not break exclusion at all: no overlap, lost update or accepted
   *       stale write. {@code none}, {@code kill-holder} and {@code reset-link} everywhere; on Redlock
   *       also {@code kill-minority} (nodes stay down longer than a lease). Not Redlock
   *       {@code expire-minority} or {@code pause-server}: a node whose keys expire early (a clock jump,
   *       or a sleep past the lease) takes the lock away from a grant held on a bare majority that
   *       includes it, and a contended grant is often decided at exactly a majority; the holder's lease
   *       goes LOST, but a holder that does not look keeps working.
   *   <li>{@link #WITHIN_FAULT_WINDOWS}: the fault legitimately breaks exclusion (pause-holder,
   *       restart-empty, kill-master, expire-majority, blackhole-link, delay-link, pause-server on one
   *       node), but only around an injection: an overlap is excused if one of its two holds intersects a
   *       fault window or is the fault victim's hold; any other overlap is a broken promise.
   * </ul>
   */
  public enum Expectation { CLEAN, WITHIN_FAULT_WINDOWS }

  /**
   * @param backend the backend
   * @param fault the fault
   * @return what Locksmith promises for {@code backend} under {@code fault}
   */
  public static Expectation expectation(CheckBackend backend, Fault fault) {
    return switch (fault) {
      case NONE, KILL_HOLDER, RESET_LINK, LATE_REPLY -> Expectation.CLEAN;
      case KILL_MINORITY -> backend == CheckBackend.REDLOCK ? Expectation.CLEAN : Expectation.WITHIN_FAULT_WINDOWS;
      default -> Expectation.WITHIN_FAULT_WINDOWS;
    };
  }

  /**
   * Whether the fault may legitimately make fencing tokens go backwards: only when it loses the
   * backend's token counter ({@code restart-empty}, {@code kill-master}), where tokens are kept
   * increasing by the server-clock floor alone (docs/safety.md). Everywhere else the counter survives
   * and a regression is a broken promise.
   *
   * @param fault the fault
   * @return true for {@code restart-empty} and {@code kill-master}
   */
  public static boolean counterMayBeLost(Fault fault) {
    return fault == Fault.RESTART_EMPTY || fault == Fault.KILL_MASTER;
  }

  /**
   * Whether, under this fault, a holder that loses its lock can be told ({@code onLost}) before another
   * client is granted it: the holder's JVM runs, and the lock service ends the hold only by time (a lease
   * or session the holder could not renew, measured from after its last proof), so the holder's own timer,
   * which runs out a drift and scheduling allowance earlier, tells it first. True for {@code
   * blackhole-link}, {@code delay-link}, {@code reset-link}, {@code pause-server}, {@code restart-server}
   * (the data is kept), {@code kill-minority} (restarted after a lease), {@code kill-leader}, {@code
   * restart-all} and {@code partition-follower}. False for {@code pause-holder} and {@code kill-holder}
   * (the holder's JVM is frozen or dead), and for {@code restart-empty}, {@code kill-master}, {@code
   * expire-minority} and {@code expire-majority}, where the service forgets the hold at once and nothing
   * could tell the holder in advance; and for {@code none}.
   *
   * @param fault the fault
   * @return whether a loss reported after the next grant breaks a promise (see {@link #brokenPromises()})
   */
  public static boolean holderMustBeToldFirst(Fault fault) {
    return switch (fault) {
      case BLACKHOLE_LINK, DELAY_LINK, RESET_LINK, PAUSE_SERVER, RESTART_SERVER, KILL_MINORITY, KILL_LEADER,
          RESTART_ALL, PARTITION_FOLLOWER -> true;
      default -> false;
    };
  }

  /**
   * Violations of what Locksmith promises for this backend and fault (see {@link Expectation}): under a
   * {@link Expectation#CLEAN} expectation any overlap, lost update or accepted stale write; otherwise
   * any overlap neither of whose holds touches a fault window; any token regression unless the fault
   * may lose the counter ({@link #counterMayBeLost(Fault)}); and with fencing, a lost update or accepted
   * stale write on a lock whose tokens did not regress (the exemption is per lock); and, where the holder
   * can be told first ({@link #holderMustBeToldFirst(Fault)}), a hold held during a fault window whose
   * holder's lease reported itself {@code LOST} only after another client was granted its lock (JSON
   * {@code faultLostReportedAfterNextGrant}; a hold lost far from every fault window is a JVM the host
   * stalled past its lease, a pause, reported in {@code lostReportedAfterNextGrant} but not judged). A
   * failed fault injection is not a broken promise but an infrastructure failure ({@link #verdict()}).
   *
   * @return descriptions of broken promises; empty if none
   */
  public List<String> brokenPromises() {
    List<String> broken = new ArrayList<>();
    String under = " under " + settings.backend().cliName() + " / " + settings.fault().cliName();
    Expectation expected = expectation(settings.backend(), settings.fault());
    if (expected == Expectation.CLEAN) {
      if (overlaps() > 0) {
        broken.add(overlaps() + " overlapping holds" + under);
      }
      if (lostUpdates() > 0) {
        broken.add(lostUpdates() + " lost updates" + under);
      }
      if (staleWritesAccepted() > 0) {
        broken.add(staleWritesAccepted() + " stale writes accepted" + under);
      }
      if (writesUnderReadHolds() > 0) {
        broken.add(writesUnderReadHolds() + " writes applied while a reader held the read side" + under);
      }
    } else {
      long outside = overlapsOutsideFaultWindows();
      if (outside > 0) {
        broken.add(outside + " overlapping holds outside every fault window" + under);
      }
      long underRead = writesUnderReadHoldsOutsideFaultWindows();
      if (underRead > 0) {
        broken.add(underRead + " writes applied while a reader held the read side, outside every fault window"
            + under);
      }
    }
    if (tokenRegressions() > 0 && !counterMayBeLost(settings.fault())) {
      broken.add(tokenRegressions() + " token regressions" + under + " (the token counter survives this fault)");
    }
    int toldLate = lossSignals().faultLostAfter();
    if (toldLate > 0 && holderMustBeToldFirst(settings.fault())) {
      broken.add(toldLate + " lost holds reported to their holder only after another client was granted the lock"
          + under + " (the holder's JVM runs: it must be told first)");
    }
    if (settings.fenced() && expected != Expectation.CLEAN) {
      int lost = onLocksThatNeverRegressed(f.lostUpdatesByLock());
      int stale = onLocksThatNeverRegressed(f.staleWritesAcceptedByLock());
      if (lost > 0) {
        broken.add(lost + " lost updates despite fencing, on locks whose tokens never regressed");
      }
      if (stale > 0) {
        broken.add(stale + " stale writes accepted despite fencing, on locks whose tokens never regressed");
      }
    }
    return broken;
  }

  /** @return overlaps neither of whose holds touches a fault window (all of them for the fault {@code none}) */
  long overlapsOutsideFaultWindows() {
    return f.overlaps().stream()
        .filter(o -> f.faults().stream().noneMatch(w -> w.touches(o.first()) || w.touches(o.second())))
        .count();
  }

  /** @return the sum of {@code byLock}'s counts over the locks whose tokens never went backwards */
  private int onLocksThatNeverRegressed(Map<String, Integer> byLock) {
    Set<String> regressed = new HashSet<>();
    f.regressions().forEach(r -> regressed.add(r.later().lock()));
    int sum = 0;
    for (var e : byLock.entrySet()) {
      sum += regressed.contains(e.getKey()) ? 0 : e.getValue();
    }
    return sum;
  }

  /** @return lost updates on locks whose tokens never regressed (fencing must have prevented them) */
  int lostUpdatesDespiteFencing() {
    return onLocksThatNeverRegressed(f.lostUpdatesByLock());
  }

  /** @return accepted stale writes on locks whose tokens never regressed */
  int staleWritesAcceptedDespiteFencing() {
    return onLocksThatNeverRegressed(f.staleWritesAcceptedByLock());
  }

  /**
   * Why the run tested nothing, if it did not: no lock was granted, a fault other than {@code none} was
   * never injected, or ({@code pause-holder}) no pause let another client in.
   *
   * @return the reasons; empty if the run is conclusive
   */
  public List<String> inconclusiveReasons() {
    List<String> reasons = new ArrayList<>();
    if (acquisitions() == 0) {
      reasons.add("no lock was granted");
    }
    if (settings.fault() != Fault.NONE && faultsInjected() == 0) {
      reasons.add("fault " + settings.fault().cliName() + " was never injected");
    } else if (settings.fault() == Fault.PAUSE_HOLDER && !pauseForcedViolation()) {
      reasons.add("no other client was granted a paused victim's lock during its pause");
    }
    return reasons;
  }

  /** @return whether the run exercised the lock and its fault (see {@link #inconclusiveReasons()}) */
  public boolean conclusive() {
    return inconclusiveReasons().isEmpty();
  }

  /** The verdict of a run, each with the exit code of {@code locksmith check}. */
  public enum Verdict {
    /** 0: completed, conclusive, no promise broken; violations the fault is known to cause are findings. */
    PASSED(0),
    /** 1: a promise was broken ({@link CheckReport#brokenPromises()}). */
    PROMISE_BROKEN(1),
    /** 3: the infrastructure failed: here, fault injection failed (start-up failures never yield a report). */
    INFRASTRUCTURE_FAILED(3),
    /** 4: the checker missed a violation the run forced. */
    CHECKER_BROKEN(4),
    /** 5: the run tested nothing ({@link CheckReport#inconclusiveReasons()}). */
    INCONCLUSIVE(5);

    private final int exitCode;

    Verdict(int exitCode) {
      this.exitCode = exitCode;
    }

    /** @return the exit code of {@code locksmith check} for this verdict */
    public int exitCode() {
      return exitCode;
    }
  }

  /**
   * The verdict, first match wins: a broken promise (evidence of a real violation outranks everything),
   * a failed fault injection, a checker that missed a forced violation, an inconclusive run, else passed.
   *
   * @return the verdict
   */
  public Verdict verdict() {
    if (!brokenPromises().isEmpty()) {
      return Verdict.PROMISE_BROKEN;
    }
    if (nemesisError != null) {
      return Verdict.INFRASTRUCTURE_FAILED;
    }
    if (!checkerSawForcedViolation()) {
      return Verdict.CHECKER_BROKEN;
    }
    return conclusive() ? Verdict.PASSED : Verdict.INCONCLUSIVE;
  }

  private Map<String, Object> fields() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("backend", settings.backend().cliName());
    m.put("fault", settings.fault().cliName());
    m.put("fenced", settings.fenced());
    m.put("kind", CheckSettings.kindName(settings.kind()));
    m.put("durationMillis", durationMillis);
    m.put("acquisitions", acquisitions());
    m.put("overlaps", overlaps());
    m.put("maxOverlapMillis", maxOverlapMillis());
    m.put("lostUpdates", lostUpdates());
    // read-write runs: writes the register applied between a reader's two looks in one read hold
    m.put("writesUnderReadHolds", writesUnderReadHolds());
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
    Checkers.LossSignals loss = lossSignals();
    m.put("grantsAfterALostHold", loss.grantsAfterUnreleasedHold());
    m.put("lostReportedBeforeNextGrant", loss.lostBefore());
    m.put("lostReportedAfterNextGrant", loss.lostAfter());
    m.put("lostNotReported", loss.notReported());
    // of lostReportedAfterNextGrant, those of holds held during a fault window (a broken promise where the
    // holder can be told first: holderMustBeToldFirst)
    m.put("faultLostReportedAfterNextGrant", loss.faultLostAfter());
    // the smallest time from a holder's onLost to the next grant of its lock; null if none was reported
    m.put("minLossMarginMillis", loss.minMarginNanos() == Long.MAX_VALUE ? null
        : Math.floorDiv(loss.minMarginNanos(), 1_000_000));
    // each of those times, in ms with µs, in the order of the grants (the smallest is the one above)
    m.put("lossMarginsMillis", loss.marginsNanos().stream()
        .map(n -> String.format(java.util.Locale.ROOT, "%.3f", n / 1e6)).toList());
    // the same for the grants that followed a fault victim's hold (the holder the fault was aimed at)
    m.put("victimGrantsAfterALostHold", loss.victimMarginsNanos().size() + loss.victimNotReported());
    m.put("victimLostReportedBeforeNextGrant", loss.victimMarginsNanos().stream().filter(n -> n > 0).count());
    m.put("victimLostNotReported", loss.victimNotReported());
    m.put("victimMinLossMarginMillis", loss.victimMarginsNanos().stream().min(Long::compare)
        .map(n -> Math.floorDiv(n, 1_000_000)).orElse(null));
    m.put("victimLossMarginsMillis", loss.victimMarginsNanos().stream()
        .map(n -> String.format(java.util.Locale.ROOT, "%.3f", n / 1e6)).toList());
    m.put("faultsInjected", faultsInjected());
    m.put("clients", settings.clients());
    m.put("processes", settings.processes());
    m.put("locks", settings.locks());
    m.put("leaseMillis", settings.lease().toMillis());
    m.put("leaseMode", settings.watched() ? "watched" : "fixed");
    m.put("loadThreads", settings.load());
    // null: the clients' default (ClientOptions.DEFAULT_SCHEDULING_ALLOWANCE)
    m.put("schedulingAllowanceMillis", settings.schedulingAllowance().map(Duration::toMillis).orElse(null));
    m.put("deployment", deployment);
    m.put("events", events.size());
    m.put("checkerSawForcedViolation", checkerSawForcedViolation());
    m.put("conclusive", conclusive());
    m.put("inconclusiveReasons", inconclusiveReasons());
    m.put("verdict", verdict().name());
    m.put("exitCode", verdict().exitCode());
    m.put("nemesisError", nemesisError);
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

  /**
   * @return how the holders that lost their lease learned it, relative to the next grant of their lock
   *     (see the JSON fields {@code grantsAfterALostHold} … {@code minLossMarginMillis})
   */
  Checkers.LossSignals lossSignals() {
    return Checkers.lossSignals(events);
  }

  /**
   * @return a human summary: the verdict in a sentence, the settings, and a Markdown table of the measures,
   *     each marked expected or not for this backend and fault
   */
  public String toTable() {
    StringBuilder sb = new StringBuilder();
    sb.append('\n').append(Readings.verdictSentence(this)).append("\n\n");
    sb.append(settings).append('\n').append(deployment).append("\n\n");
    sb.append("| measure | value | for this fault |\n|---|---:|---|\n");
    Map<String, Readings.Reading> judged = Readings.of(this);
    judged.forEach((k, v) -> sb.append("| ").append(k).append(" | ").append(v.value()).append(" | ")
        .append(v.text()).append(" |\n"));
    for (var e : fields().entrySet()) { // the other figures, for context (the settings are in the line above)
      Object v = e.getValue();
      if (v instanceof Number && !judged.containsKey(e.getKey()) && !SETTINGS_FIELDS.contains(e.getKey())) {
        sb.append("| ").append(e.getKey()).append(" | ").append(v).append(" | |\n");
      }
    }
    sb.append('\n');
    faultLog.forEach(l -> sb.append("  ").append(l).append('\n'));
    if (!checkerSawForcedViolation()) {
      sb.append("CHECKER BROKEN: holders were paused past their leases without fencing, yet no overlap or lost"
          + " update was seen\n");
    }
    brokenPromises().forEach(b -> sb.append("VIOLATION: ").append(b).append('\n'));
    inconclusiveReasons().forEach(r -> sb.append("INCONCLUSIVE: ").append(r).append('\n'));
    if (nemesisError != null) {
      sb.append("INFRASTRUCTURE FAILED: fault injection failed: ").append(nemesisError).append('\n');
    }
    return sb.toString();
  }

  /** JSON fields that repeat the settings or the verdict, which the table shows in words instead. */
  private static final Set<String> SETTINGS_FIELDS = Set.of("durationMillis", "clients", "processes", "locks",
      "leaseMillis", "loadThreads", "schedulingAllowanceMillis", "events", "exitCode");

  /** @return a self-contained HTML page: the figures, a timeline of holds per client, the token sequence */
  public String toHtml() {
    return Html.render(this, fields(), f, events, startNanos);
  }
}
