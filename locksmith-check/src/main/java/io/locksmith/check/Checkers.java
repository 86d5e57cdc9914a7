package io.locksmith.check;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The checkers: pure functions from a history (ordered by stamp) to findings. Nothing here looks at
 * anything but the events, so a hand-built history tests them completely.
 *
 * <p><b>Holds are conservative.</b> A hold is counted from its acquisition's completion ({@code
 * ACQUIRE OK}, stamped after {@code acquire} returned) to the invocation of its release ({@code RELEASE
 * INVOKE}, stamped before {@code release} is called): the real hold contains this interval, so an
 * overlap of two such intervals is an overlap of two real holds. A hold whose release was never
 * invoked (the process was killed or stopped at the end) is counted up to that client's last recorded
 * event. An acquisition with an indeterminate outcome ({@code INFO}) is not a hold.
 *
 * <p><b>"Definitely later".</b> Grant B is definitely later than grant A when B's acquisition was
 * invoked after A's completed. Token monotonicity is only judged for such pairs, so concurrent
 * acquisitions (whose order the lock service may have decided either way) never yield a false report.
 *
 * <p><b>Register order.</b> Staleness is judged by the order in which the register applied reads and
 * writes (the history order of their completions, stamped inside the register's monitor), not by
 * acquisition times.
 */
final class Checkers {
  private Checkers() {}

  /** A counted hold. */
  record Hold(int id, String client, String lock, long token, long invokeNanos, long startNanos, long endNanos,
      boolean released) {}

  /** Two holds of one lock that overlap for {@code nanos}. */
  record Overlap(Hold first, Hold second, long nanos) {}

  /** A grant whose token is not larger than that of a definitely earlier grant. */
  record Regression(Hold earlier, Hold later) {}

  /**
   * A fault from injection to healing.
   *
   * @param victim the client the fault was aimed at, or null (see {@link #victimTag(String)})
   * @param victimLock the lock the victim held when it was picked, or {@code ""}
   */
  record FaultWindow(long startNanos, long endNanos, String detail, String victim, String victimLock) {
    /** @return whether {@code h} intersects this window or is the victim's hold at the injection */
    boolean touches(Hold h) {
      if (h.startNanos() < endNanos && h.endNanos() > startNanos) {
        return true;
      }
      return victim != null && victim.equals(h.client()) && victimLock.equals(h.lock()) && h.startNanos() <= endNanos
          && h.endNanos() >= startNanos;
    }
  }

  private static final java.util.regex.Pattern VICTIM = java.util.regex.Pattern.compile("\\[victim ([^\\]]+)\\]");

  /**
   * The tag a {@code FAULT INVOKE} event's detail carries when the fault picked a victim; the event's
   * lock is then the victim's lock.
   *
   * @param client the victim's client id
   * @return the tag to append to the detail
   */
  static String victimTag(String client) {
    return " [victim " + client + "]";
  }

  /** Everything the checkers found. */
  record Findings(int acquisitions, int acquireFailures, int acquireIndeterminate, List<Hold> holds,
      List<Overlap> overlaps, long maxOverlapNanos, int lostUpdates, List<Regression> regressions,
      int staleWritesAccepted, int staleWritesRejected, int staleReadsRejected, int writesAccepted,
      int releasesLost, long maxUnavailableNanos, long maxGapNanos, List<FaultWindow> faults,
      Map<String, Integer> lostUpdatesByLock, Map<String, Integer> staleWritesAcceptedByLock,
      List<ReadHoldWrite> writesUnderReadHolds) {}

  /**
   * A write that the register applied while a reader held the read side of a read-write lock: between the
   * reader's two looks at the register in one hold, the version changed. Both looks are inside the read
   * hold, and the register orders them with every write, so this is a real writer inside a real read hold.
   *
   * @param startNanos the first look
   * @param endNanos the second look
   * @param firstVersion the version the first look saw
   * @param secondVersion the version the second look saw
   */
  record ReadHoldWrite(String client, String lock, long startNanos, long endNanos, long firstVersion,
      long secondVersion) {
    /** @return a hold-shaped view of the reader's interval, for fault-window tests */
    Hold asHold() {
      return new Hold(-1, client, lock, 0, startNanos, startNanos, endNanos, true);
    }
  }

  /**
   * @param history the run's events in order
   * @return every read hold (two {@code PEEK}s of one reader on one lock) between whose looks the
   *     register's version changed
   */
  static List<ReadHoldWrite> writesUnderReadHolds(List<Event> history) {
    Map<String, Event> firstLook = new HashMap<>();
    List<ReadHoldWrite> found = new ArrayList<>();
    for (Event e : history) {
      if (e.op() != Event.Op.PEEK || e.type() != Event.Type.OK) {
        continue;
      }
      String key = e.client() + "\u0000" + e.lock();
      if (!Register.AGAIN.equals(e.detail())) {
        firstLook.put(key, e);
        continue;
      }
      Event first = firstLook.remove(key);
      if (e.value() != e.readFrom()) {
        found.add(new ReadHoldWrite(e.client(), e.lock(), first == null ? e.nanos() : first.nanos(), e.nanos(),
            e.readFrom(), e.value()));
      }
    }
    return found;
  }

  static Findings check(List<Event> history, long runEndNanos) {
    List<Hold> holds = holds(history);
    List<Overlap> overlaps = overlaps(holds);
    long maxOverlap = maxOverlapPerHold(overlaps);
    int acquireFail = 0;
    int acquireInfo = 0;
    int staleWritesRejected = 0;
    int staleReadsRejected = 0;
    int writesAccepted = 0;
    int releasesLost = 0;
    for (Event e : history) {
      if (e.op() == Event.Op.ACQUIRE && e.type() == Event.Type.FAIL) {
        acquireFail++;
      } else if (e.op() == Event.Op.ACQUIRE && e.type() == Event.Type.INFO) {
        acquireInfo++;
      } else if (e.op() == Event.Op.WRITE && e.type() == Event.Type.FAIL) {
        staleWritesRejected++;
      } else if (e.op() == Event.Op.READ && e.type() == Event.Type.FAIL) {
        staleReadsRejected++;
      } else if (e.op() == Event.Op.WRITE && e.type() == Event.Type.OK) {
        writesAccepted++;
      } else if (e.op() == Event.Op.RELEASE && e.type() == Event.Type.FAIL) {
        releasesLost++;
      }
    }
    List<FaultWindow> faults = faultWindows(history, runEndNanos);
    long[] unavailable = unavailability(history, holds, faults, runEndNanos);
    Map<String, Integer> lostByLock = lostUpdatesByLock(history);
    Map<String, Integer> staleByLock = staleWritesAcceptedByLock(history, holds);
    return new Findings(holds.size(), acquireFail, acquireInfo, holds, overlaps, maxOverlap, sum(lostByLock),
        tokenRegressions(holds), sum(staleByLock), staleWritesRejected, staleReadsRejected,
        writesAccepted, releasesLost, unavailable[0], unavailable[1], faults, lostByLock, staleByLock,
        writesUnderReadHolds(history));
  }

  private static int sum(Map<String, Integer> counts) {
    return counts.values().stream().mapToInt(Integer::intValue).sum();
  }

  /**
   * How the holders that lost their lease learned it, relative to the next grant of the same lock to
   * another client (a grant while the previous holder had not begun to release: the previous hold was
   * lost, to an expiry, a partition or an eviction).
   *
   * @param grantsAfterUnreleasedHold such grants
   * @param lostBefore of them, how many came after the previous holder's lease reported itself lost
   * @param lostAfter how many came before that report (it came later)
   * @param notReported how many had no report from the previous holder at all (its JVM killed or stopped
   *     until the end)
   * @param minMarginNanos the smallest time from a report to the grant that followed it, negative if a
   *     report came after the grant; {@link Long#MAX_VALUE} if there was no report before any such grant
   * @param marginsNanos every such time, in the order of the grants (none for a hold never reported lost)
   * @param victimMarginsNanos of those, the ones that follow a fault victim's hold taken in its fault window
   *     (the holder the fault was aimed at, e.g. the one whose link was blackholed), rather than a hold lost
   *     to something the fault did not aim at (a JVM stalled by the host's load)
   * @param victimNotReported grants after a fault victim's hold that was never reported lost
   * @param faultLostAfter of {@code lostAfter}, the grants after a hold that was held during a fault window
   *     (granted before the window's end, the next grant after its start; any client, not only the victim:
   *     a cut-off member serves every client connected to it), rather than a hold lost far from every
   *     fault, which only a JVM stalled past its whole lease loses
   */
  record LossSignals(int grantsAfterUnreleasedHold, int lostBefore, int lostAfter, int notReported,
      long minMarginNanos, List<Long> marginsNanos, List<Long> victimMarginsNanos, int victimNotReported,
      int faultLostAfter) {}

  /** See {@link LossSignals}; {@code LOST} events are those of {@link Event.Op#LOST}. */
  static LossSignals lossSignals(List<Event> history) {
    record Current(String client, String lock, long startNanos, long token, long[] lostAt, boolean[] released) {}
    Map<String, Current> byLock = new HashMap<>();
    List<Current> earlier = new ArrayList<>();
    Map<Current, Long> grantsAfter = new LinkedHashMap<>();
    for (Event e : history) {
      Current c = byLock.get(e.lock());
      if (e.op() == Event.Op.ACQUIRE && e.type() == Event.Type.OK) {
        if (c != null && !c.released()[0] && !c.client().equals(e.client())) {
          grantsAfter.put(c, e.nanos());
          earlier.add(c);
        }
        byLock.put(e.lock(), new Current(e.client(), e.lock(), e.nanos(), e.token(), new long[] {Long.MIN_VALUE},
            new boolean[1]));
      } else if (c != null && e.client().equals(c.client()) && e.token() == c.token()) {
        if (e.op() == Event.Op.RELEASE && e.type() == Event.Type.INVOKE && c.lostAt()[0] == Long.MIN_VALUE) {
          c.released()[0] = true;
        }
      }
      if (e.op() == Event.Op.LOST) { // also for a hold another client already followed
        for (Current h : earlier) {
          if (h.client().equals(e.client()) && h.token() == e.token() && h.lostAt()[0] == Long.MIN_VALUE) {
            h.lostAt()[0] = e.nanos();
          }
        }
        if (c != null && c.client().equals(e.client()) && c.token() == e.token() && c.lostAt()[0] == Long.MIN_VALUE) {
          c.lostAt()[0] = e.nanos();
        }
      }
    }
    int before = 0;
    int after = 0;
    int none = 0;
    long min = Long.MAX_VALUE;
    List<Long> margins = new ArrayList<>();
    List<Long> victimMargins = new ArrayList<>();
    int victimNone = 0;
    int faultAfter = 0;
    List<FaultWindow> windows = faultWindows(history, Long.MAX_VALUE);
    for (Map.Entry<Current, Long> g : grantsAfter.entrySet()) {
      Current c = g.getKey();
      long lostAt = c.lostAt()[0];
      boolean victim = windows.stream().anyMatch(w -> c.client().equals(w.victim()) && c.lock().equals(w.victimLock())
          && c.startNanos() <= w.endNanos() && g.getValue() >= w.startNanos());
      if (lostAt == Long.MIN_VALUE) {
        none++;
        victimNone += victim ? 1 : 0;
        continue;
      }
      long margin = g.getValue() - lostAt;
      margins.add(margin);
      if (victim) {
        victimMargins.add(margin);
      }
      if (margin > 0) {
        before++;
      } else {
        after++;
        boolean inFault = windows.stream().anyMatch(w -> c.startNanos() <= w.endNanos()
            && g.getValue() >= w.startNanos());
        faultAfter += inFault ? 1 : 0;
      }
      min = Math.min(min, margin);
    }
    return new LossSignals(grantsAfter.size(), before, after, none, min, List.copyOf(margins),
        List.copyOf(victimMargins), victimNone, faultAfter);
  }

  /** Holds per client, from ACQUIRE OK to RELEASE INVOKE (see the class comment). */
  static List<Hold> holds(List<Event> history) {
    Map<String, long[]> lastEvent = new HashMap<>();
    for (Event e : history) {
      lastEvent.computeIfAbsent(e.client(), c -> new long[1])[0] = e.nanos();
    }
    Map<String, Long> lastInvoke = new HashMap<>();
    Map<String, Event> open = new LinkedHashMap<>();
    List<Hold> holds = new ArrayList<>();
    for (Event e : history) {
      if (e.op() == Event.Op.ACQUIRE && e.type() == Event.Type.INVOKE) {
        lastInvoke.put(e.client(), e.nanos());
      } else if (e.op() == Event.Op.ACQUIRE && e.type() == Event.Type.OK) {
        Event previous = open.put(e.client(), e);
        if (previous != null) { // a grant without a release in between: count the first up to here
          holds.add(hold(holds.size(), previous, lastInvoke, e.nanos(), false));
        }
      } else if (e.op() == Event.Op.RELEASE && e.type() == Event.Type.INVOKE) {
        Event start = open.remove(e.client());
        if (start != null) {
          holds.add(hold(holds.size(), start, lastInvoke, e.nanos(), true));
        }
      }
    }
    for (Event start : open.values()) {
      holds.add(hold(holds.size(), start, lastInvoke, lastEvent.get(start.client())[0], false));
    }
    holds.sort(Comparator.comparingLong(Hold::startNanos));
    List<Hold> numbered = new ArrayList<>(holds.size());
    for (Hold h : holds) {
      numbered.add(new Hold(numbered.size(), h.client(), h.lock(), h.token(), h.invokeNanos(), h.startNanos(),
          h.endNanos(), h.released()));
    }
    return numbered;
  }

  private static Hold hold(int id, Event ok, Map<String, Long> lastInvoke, long end, boolean released) {
    long invoke = lastInvoke.getOrDefault(ok.client(), ok.nanos());
    return new Hold(id, ok.client(), ok.lock(), ok.token(), invoke, ok.nanos(), Math.max(end, ok.nanos()), released);
  }

  /** Every pair of holds of one lock whose intervals intersect with positive length. */
  static List<Overlap> overlaps(List<Hold> holds) {
    List<Overlap> result = new ArrayList<>();
    Map<String, List<Hold>> active = new HashMap<>();
    for (Hold h : holds) { // sorted by start
      List<Hold> act = active.computeIfAbsent(h.lock(), k -> new ArrayList<>());
      act.removeIf(a -> a.endNanos() <= h.startNanos());
      for (Hold a : act) {
        long nanos = Math.min(a.endNanos(), h.endNanos()) - h.startNanos();
        if (nanos > 0) {
          result.add(new Overlap(a, h, nanos));
        }
      }
      act.add(h);
    }
    return result;
  }

  /**
   * For each hold, the total time during which at least one other hold of the same lock overlapped it
   * (the union of its intersections); returns the largest. A holder paused past its lease while others
   * come and go scores the whole time it overlapped them, not the length of the longest single other
   * hold.
   */
  static long maxOverlapPerHold(List<Overlap> overlaps) {
    Map<Integer, List<long[]>> byHold = new HashMap<>();
    for (Overlap o : overlaps) {
      long[] interval = {o.second().startNanos(), Math.min(o.first().endNanos(), o.second().endNanos())};
      byHold.computeIfAbsent(o.first().id(), k -> new ArrayList<>()).add(interval);
      byHold.computeIfAbsent(o.second().id(), k -> new ArrayList<>()).add(interval);
    }
    long max = 0;
    for (List<long[]> intervals : byHold.values()) {
      intervals.sort(Comparator.comparingLong(i -> i[0]));
      long total = 0;
      long curStart = Long.MIN_VALUE;
      long curEnd = Long.MIN_VALUE;
      for (long[] i : intervals) {
        if (i[0] > curEnd) {
          total += curEnd > curStart ? curEnd - curStart : 0;
          curStart = i[0];
          curEnd = i[1];
        } else {
          curEnd = Math.max(curEnd, i[1]);
        }
      }
      total += curEnd > curStart ? curEnd - curStart : 0;
      max = Math.max(max, total);
    }
    return max;
  }

  /**
   * Lost updates on the registers. Every accepted write records the version it had read; a write that
   * read version v and is applied when the register holds a later version overwrites, unseen, every
   * write applied after v. Each overwritten write is counted once.
   */
  static int lostUpdates(List<Event> history) {
    return sum(lostUpdatesByLock(history));
  }

  /** {@link #lostUpdates(List)} per lock name (locks without a lost update are absent). */
  static Map<String, Integer> lostUpdatesByLock(List<Event> history) {
    Map<String, List<Long>> applied = new HashMap<>();
    Map<String, Map<Long, Integer>> position = new HashMap<>();
    Map<String, Set<Long>> lost = new LinkedHashMap<>();
    for (Event e : history) {
      if (e.op() != Event.Op.WRITE || e.type() != Event.Type.OK) {
        continue;
      }
      List<Long> seq = applied.computeIfAbsent(e.lock(), k -> new ArrayList<>());
      Map<Long, Integer> pos = position.computeIfAbsent(e.lock(), k -> new HashMap<>());
      int base = e.readFrom() == 0 ? -1 : pos.getOrDefault(e.readFrom(), -1);
      for (int k = base + 1; k < seq.size(); k++) {
        lost.computeIfAbsent(e.lock(), l -> new HashSet<>()).add(seq.get(k));
      }
      pos.put(e.value(), seq.size());
      seq.add(e.value());
    }
    Map<String, Integer> counts = new LinkedHashMap<>();
    lost.forEach((lock, versions) -> counts.put(lock, versions.size()));
    return counts;
  }

  /**
   * Grants whose token is not strictly larger than the token of a definitely earlier grant of the same
   * lock (one entry per offending grant, paired with the earlier grant of the largest token).
   */
  static List<Regression> tokenRegressions(List<Hold> holds) {
    List<Regression> result = new ArrayList<>();
    Map<String, List<Hold>> byLock = new LinkedHashMap<>();
    holds.forEach(h -> byLock.computeIfAbsent(h.lock(), k -> new ArrayList<>()).add(h));
    for (List<Hold> grants : byLock.values()) {
      List<Hold> byOk = new ArrayList<>(grants);
      byOk.sort(Comparator.comparingLong(Hold::startNanos));
      List<Hold> byInvoke = new ArrayList<>(grants);
      byInvoke.sort(Comparator.comparingLong(Hold::invokeNanos));
      int next = 0;
      Hold max = null;
      for (Hold b : byInvoke) {
        while (next < byOk.size() && byOk.get(next).startNanos() < b.invokeNanos()) {
          Hold a = byOk.get(next++);
          if (max == null || a.token() > max.token()) {
            max = a;
          }
        }
        if (max != null && b.token() <= max.token()) {
          result.add(new Regression(max, b));
        }
      }
    }
    return result;
  }

  /**
   * Accepted writes made by a superseded holder, judged in register order: a write is stale if, between
   * its holder's first touch (read or write) of the register under this grant and the write itself,
   * the register was touched by another holder of the same lock. Touches outside any counted hold are
   * ignored.
   */
  static int staleWritesAccepted(List<Event> history, List<Hold> holds) {
    return sum(staleWritesAcceptedByLock(history, holds));
  }

  /** {@link #staleWritesAccepted(List, List)} per lock name (locks without one are absent). */
  static Map<String, Integer> staleWritesAcceptedByLock(List<Event> history, List<Hold> holds) {
    Map<String, List<Hold>> byClient = new HashMap<>();
    holds.forEach(h -> byClient.computeIfAbsent(h.client(), k -> new ArrayList<>()).add(h));
    Map<String, Set<Integer>> touched = new HashMap<>(); // per lock: holds that touched it and may still write
    Set<Integer> interleaved = new HashSet<>(); // holds whose register another holder touched since their first touch
    Map<String, Integer> stale = new LinkedHashMap<>();
    Map<Integer, Hold> byId = new HashMap<>();
    holds.forEach(h -> byId.put(h.id(), h));
    for (Event e : history) {
      boolean touch = (e.op() == Event.Op.READ || e.op() == Event.Op.WRITE) && e.type() == Event.Type.OK;
      if (!touch) {
        continue;
      }
      Hold h = holdAt(byClient.get(e.client()), e.lock(), e.nanos());
      if (h == null) {
        continue; // a touch outside any counted hold: nothing to judge
      }
      Set<Integer> others = touched.computeIfAbsent(e.lock(), k -> new HashSet<>());
      if (e.op() == Event.Op.WRITE && interleaved.contains(h.id())) {
        stale.merge(e.lock(), 1, Integer::sum);
      }
      others.removeIf(id -> byId.get(id).endNanos() < e.nanos()); // ended: cannot write again
      for (int id : others) {
        if (id != h.id()) {
          interleaved.add(id);
        }
      }
      others.add(h.id());
    }
    return stale;
  }

  private static Hold holdAt(List<Hold> holds, String lock, long nanos) {
    if (holds == null) {
      return null;
    }
    Hold best = null;
    for (Hold h : holds) {
      if (h.lock().equals(lock) && h.startNanos() <= nanos && (best == null || h.startNanos() > best.startNanos())) {
        best = h;
      }
    }
    return best;
  }

  static List<FaultWindow> faultWindows(List<Event> history, long runEndNanos) {
    List<FaultWindow> result = new ArrayList<>();
    Event open = null;
    for (Event e : history) {
      if (e.op() != Event.Op.FAULT) {
        continue;
      }
      if (e.type() == Event.Type.INVOKE) {
        open = e;
      } else if (open != null) {
        result.add(window(open, e.nanos(), ""));
        open = null;
      }
    }
    if (open != null) {
      result.add(window(open, runEndNanos, " (not healed)"));
    }
    return result;
  }

  private static FaultWindow window(Event invoke, long end, String suffix) {
    var m = VICTIM.matcher(invoke.detail());
    String victim = m.find() ? m.group(1) : null;
    return new FaultWindow(invoke.nanos(), end, invoke.detail() + suffix, victim, invoke.lock());
  }

  /**
   * Per lock, the gaps between successive grants (and from the last grant to the end of the run). A gap
   * counts as unavailability only for as long as some client was waiting for that lock in it: a lock
   * nobody asked for is idle, not unavailable (e.g. while every client waits behind a fault's victim on
   * another lock). Returns {longest such wait in a gap touching a fault window (or in any gap if there
   * were no faults), longest gap}.
   */
  static long[] unavailability(List<Event> history, List<Hold> holds, List<FaultWindow> faults,
      long runEndNanos) {
    Map<String, List<long[]>> attempts = new HashMap<>(); // per lock: {invoke, completion}
    Map<String, long[]> pending = new HashMap<>(); // per client: its attempt in flight
    for (Event e : history) {
      if (e.op() != Event.Op.ACQUIRE) {
        continue;
      }
      if (e.type() == Event.Type.INVOKE) {
        long[] a = {e.nanos(), runEndNanos};
        attempts.computeIfAbsent(e.lock(), k -> new ArrayList<>()).add(a);
        pending.put(e.client(), a);
      } else {
        long[] a = pending.remove(e.client());
        if (a != null) {
          a[1] = e.nanos();
        }
      }
    }
    Map<String, List<Long>> starts = new HashMap<>();
    for (Hold h : holds) {
      starts.computeIfAbsent(h.lock(), k -> new ArrayList<>()).add(h.startNanos());
    }
    long maxGap = 0;
    long maxWait = 0;
    long maxFaultWait = 0;
    for (Map.Entry<String, List<Long>> entry : starts.entrySet()) {
      List<Long> s = entry.getValue();
      List<long[]> tries = attempts.getOrDefault(entry.getKey(), List.of());
      s.sort(null);
      s.add(Math.max(runEndNanos, s.get(s.size() - 1)));
      for (int i = 1; i < s.size(); i++) {
        long from = s.get(i - 1);
        long to = s.get(i);
        maxGap = Math.max(maxGap, to - from);
        long waited = 0;
        for (long[] a : tries) {
          waited = Math.max(waited, Math.min(a[1], to) - Math.max(a[0], from));
        }
        maxWait = Math.max(maxWait, waited);
        for (FaultWindow f : faults) {
          if (from < f.endNanos() && to > f.startNanos()) {
            maxFaultWait = Math.max(maxFaultWait, waited);
          }
        }
      }
    }
    return new long[] {faults.isEmpty() ? maxWait : maxFaultWait, maxGap};
  }
}
