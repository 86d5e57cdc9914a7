package io.locksmith.check;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * How a report reads for its backend and fault: the verdict in a sentence, and for each measure whether
 * its value is what this fault is expected to produce. Without this a passing {@code pause-holder} run
 * shows {@code overlaps 199} and a negative loss margin with exit 0, and the reader cannot tell a finding
 * the fault is known to cause from a broken promise (issue 25). The marks restate the rules of {@link
 * CheckReport#brokenPromises()}, {@link CheckReport#inconclusiveReasons()} and {@link
 * CheckReport#checkerSawForcedViolation()}; they never decide the verdict.
 */
final class Readings {
  /** What a value means for this backend and fault. */
  enum Mark {
    /** What the fault is expected to produce (or what must hold, and holds). */
    EXPECTED("expected"),
    /** A broken promise, a run that tested nothing, or a missed bound. */
    NOT_EXPECTED("NOT expected"),
    /** Context: no promise is made about it. */
    INFO("");

    final String label;

    Mark(String label) {
      this.label = label;
    }
  }

  /** One measure's mark and the reason, in a few words. */
  record Reading(long value, Mark mark, String why) {
    String text() {
      return mark == Mark.INFO ? why : why.isEmpty() ? mark.label : mark.label + ": " + why;
    }
  }

  private Readings() {}

  /** @return the verdict of {@code r} as one or two sentences, starting with its name in capitals */
  static String verdictSentence(CheckReport r) {
    CheckSettings s = r.settings();
    String run = s.backend().cliName() + " under " + s.fault().cliName() + (s.fenced() ? ", fenced" : ", unfenced");
    switch (r.verdict()) {
      case PROMISE_BROKEN:
        return "PROMISE BROKEN: " + run + ": " + String.join("; ", r.brokenPromises()) + ".";
      case INFRASTRUCTURE_FAILED:
        return "INFRASTRUCTURE FAILED: " + run + ": fault injection failed (" + r.nemesisError()
            + "), so nothing is concluded.";
      case CHECKER_BROKEN:
        return "CHECKER BROKEN: " + run + ": holders were paused past their leases without fencing, yet the "
            + "checker saw no overlap or lost update: its \"0 violations\" cannot be trusted.";
      case INCONCLUSIVE:
        return "INCONCLUSIVE: " + run + ": nothing was tested (" + String.join("; ", r.inconclusiveReasons())
            + ").";
      default:
        break;
    }
    StringBuilder sb = new StringBuilder("PASSED: ").append(run).append(": no promise broken in ")
        .append(r.acquisitions()).append(" grants");
    if (s.fault() != Fault.NONE) {
      sb.append(" and ").append(r.faultsInjected()).append(" injections");
    }
    sb.append('.');
    if (r.overlaps() > 0) {
      // only possible here under a fault that is known to break exclusion: every overlap touches a window
      sb.append(" The ").append(r.overlaps()).append(" overlapping holds all touch a fault window, where ")
          .append(s.fault().cliName()).append(" is known to break exclusion (docs/safety.md)");
      if (s.fenced()) {
        sb.append("; fencing rejected ").append(r.staleWritesRejected()).append(" stale writes");
      } else if (r.lostUpdates() > 0) {
        sb.append("; unfenced, they lost ").append(r.lostUpdates())
            .append(" updates: run with --fenced to see the resource reject them");
      }
      sb.append('.');
    }
    return sb.toString();
  }

  /** @return the measures of the summary table, in its order, each with its mark */
  static Map<String, Reading> of(CheckReport r) {
    CheckSettings s = r.settings();
    Fault fault = s.fault();
    boolean clean = CheckReport.expectation(s.backend(), fault) == CheckReport.Expectation.CLEAN;
    Map<String, Reading> m = new LinkedHashMap<>();
    m.put("acquisitions", r.acquisitions() > 0 ? ok(r.acquisitions(), "")
        : bad(0, "nothing was granted: nothing was tested"));
    m.put("faultsInjected", fault == Fault.NONE ? info(r.faultsInjected(), "no fault was asked for")
        : r.faultsInjected() > 0 ? ok(r.faultsInjected(), "") : bad(0, "the fault never happened"));
    long outside = r.overlapsOutsideFaultWindows();
    if (clean) {
      m.put("overlaps", r.overlaps() == 0 ? ok(0, "this fault must not break exclusion")
          : bad(r.overlaps(), "this fault must not break exclusion"));
    } else if (outside > 0) {
      m.put("overlaps", bad(r.overlaps(), outside + " outside every fault window"));
    } else {
      m.put("overlaps", ok(r.overlaps(), r.overlaps() == 0 ? "none happened to overlap"
          : "all touch a fault window, where this fault breaks exclusion"));
    }
    m.put("maxOverlapMillis", info(r.maxOverlapMillis(), "the longest a hold was overlapped"));
    m.put("lostUpdates", writes(r.lostUpdates(), clean, s.fenced(), r.lostUpdatesDespiteFencing(),
        "lost"));
    m.put("staleWritesAccepted", writes(r.staleWritesAccepted(), clean, s.fenced(),
        r.staleWritesAcceptedDespiteFencing(), "accepted"));
    m.put("staleWritesRejected", s.fenced()
        ? info(r.staleWritesRejected(), "writes of superseded holders that fencing refused")
        : info(r.staleWritesRejected(), "unfenced: the register checks no token"));
    if (r.tokenRegressions() == 0) {
      m.put("tokenRegressions", ok(0, ""));
    } else {
      m.put("tokenRegressions", CheckReport.counterMayBeLost(fault)
          ? ok(r.tokenRegressions(), "this fault loses the token counter; the clock floor alone orders tokens")
          : bad(r.tokenRegressions(), "the token counter survives this fault"));
    }
    Checkers.LossSignals loss = r.lossSignals();
    boolean mustTell = CheckReport.holderMustBeToldFirst(fault);
    if (mustTell) {
      m.put("faultLostReportedAfterNextGrant", loss.faultLostAfter() == 0
          ? ok(0, "the holder's JVM runs: it must learn of a loss before the next grant")
          : bad(loss.faultLostAfter(), "the holder's JVM runs: it must learn of a loss before the next grant"));
    } else {
      m.put("faultLostReportedAfterNextGrant", info(loss.faultLostAfter(), fault == Fault.NONE ? ""
          : "this fault gives the holder no chance to learn first (frozen or dead JVM, or a forgotten hold)"));
    }
    m.put("lostReportedAfterNextGrant", info(loss.lostAfter(),
        "a loss far from every fault window is a JVM the host stalled past its lease"));
    if (loss.minMarginNanos() != Long.MAX_VALUE) {
      long margin = Math.floorDiv(loss.minMarginNanos(), 1_000_000);
      m.put("minLossMarginMillis", margin >= 0 ? ok(margin, "every holder learned of its loss before the next grant")
          : mustTell ? info(margin, "negative: see faultLostReportedAfterNextGrant")
          : fault == Fault.PAUSE_HOLDER ? ok(margin, "a frozen holder learns of its loss only when it thaws")
          : info(margin, "negative: a holder learned of its loss after the next grant"));
    }
    long unavailable = r.maxUnavailableMillis();
    m.put("maxUnavailableMillis", unavailable <= r.unavailableBoundMillis()
        ? ok(unavailable, "within the bound below")
        : bad(unavailable, "above the bound: availability, not a broken promise"));
    m.put("unavailableBoundMillis", info(r.unavailableBoundMillis(), "the fault's outage + lease + 2 s"));
    if (fault == Fault.PAUSE_HOLDER && !s.fenced()) {
      m.put("checkerSawForcedViolation", r.checkerSawForcedViolation() ? ok(1, "1 = yes: the checker is trusted")
          : bad(0, "0 = no: a violation the run forced went unseen"));
    }
    return m;
  }

  /** Lost updates or accepted stale writes: what the expectation and fencing make of them. */
  private static Reading writes(int count, boolean clean, boolean fenced, int despiteFencing, String verb) {
    if (count == 0) {
      return ok(0, "");
    }
    if (clean) {
      return bad(count, "this fault must not break exclusion");
    }
    if (!fenced) {
      return ok(count, "unfenced writes under overlapping holds (--fenced prevents them)");
    }
    return despiteFencing > 0 ? bad(count, despiteFencing + " " + verb + " despite fencing")
        : ok(count, "all on locks whose tokens went backwards (counter lost)");
  }

  /** @return the table rows: measure, value, reading */
  static List<String[]> rows(CheckReport r) {
    return of(r).entrySet().stream()
        .map(e -> new String[] {e.getKey(), Long.toString(e.getValue().value()), e.getValue().text()})
        .toList();
  }

  private static Reading ok(long value, String why) {
    return new Reading(value, Mark.EXPECTED, why);
  }

  private static Reading bad(long value, String why) {
    return new Reading(value, Mark.NOT_EXPECTED, why);
  }

  private static Reading info(long value, String why) {
    return new Reading(value, Mark.INFO, why);
  }
}
