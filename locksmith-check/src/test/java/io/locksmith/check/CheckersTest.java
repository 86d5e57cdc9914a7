package io.locksmith.check;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.check.Event.Op;
import io.locksmith.check.Event.Type;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The checkers on hand-built histories: each known violation is found, a clean history yields zeros. */
@Tag("unit")
class CheckersTest {
  private static final long MS = 1_000_000;
  private final List<Event> h = new ArrayList<>();

  private CheckersTest ev(long ms, String client, Op op, Type type, String lock, long token, long value, long readFrom) {
    h.add(new Event(ms * MS, client, op, type, lock, token, value, readFrom, ""));
    return this;
  }

  /** A full cycle: acquire invoke/ok, read (version read), write (version written), release invoke/ok. */
  private CheckersTest cycle(String client, String lock, long token, long from, long to, long read, long wrote) {
    ev(from, client, Op.ACQUIRE, Type.INVOKE, lock, 0, 0, 0);
    ev(from + 1, client, Op.ACQUIRE, Type.OK, lock, token, 0, 0);
    ev(from + 2, client, Op.READ, Type.OK, lock, token, read, 0);
    ev(to - 2, client, Op.WRITE, Type.OK, lock, token, wrote, read);
    ev(to, client, Op.RELEASE, Type.INVOKE, lock, token, 0, 0);
    ev(to + 1, client, Op.RELEASE, Type.OK, lock, token, 0, 0);
    return this;
  }

  private Checkers.Findings check(long endMs) {
    List<Event> sorted = new ArrayList<>(h);
    sorted.sort(java.util.Comparator.comparingLong(Event::nanos));
    return Checkers.check(sorted, endMs * MS);
  }

  @Test
  void aCleanHistoryYieldsZeros() {
    cycle("a", "L", 10, 0, 20, 0, 1).cycle("b", "L", 11, 25, 40, 1, 2).cycle("a", "L", 12, 45, 60, 2, 3)
        .cycle("c", "M", 5, 0, 50, 0, 4);
    Checkers.Findings f = check(70);
    assertThat(f.acquisitions()).isEqualTo(4);
    assertThat(f.overlaps()).isEmpty();
    assertThat(f.maxOverlapNanos()).isZero();
    assertThat(f.lostUpdates()).isZero();
    assertThat(f.regressions()).isEmpty();
    assertThat(f.staleWritesAccepted()).isZero();
    assertThat(f.staleWritesRejected()).isZero();
    assertThat(f.writesAccepted()).isEqualTo(4);
    // no faults: the longest time a client waited while nobody got the lock (each grant took 1 ms);
    // M, idle from its only grant to the end, is not unavailable: nobody asked for it
    assertThat(f.maxUnavailableNanos()).isEqualTo(1 * MS);
    assertThat(f.maxGapNanos()).isEqualTo(69 * MS);
  }

  /** A reader's two looks at the register within one read hold; {@code second} is what the second saw. */
  private CheckersTest readHold(String client, String lock, long from, long to, long first, long second) {
    ev(from, client, Op.SHARED_ACQUIRE, Type.OK, lock, 0, 0, 0);
    ev(from + 1, client, Op.PEEK, Type.OK, lock, 0, first, 0);
    h.add(new Event((to - 1) * MS, client, Op.PEEK, Type.OK, lock, 0, second, first, Register.AGAIN));
    ev(to, client, Op.SHARED_RELEASE, Type.INVOKE, lock, 0, 0, 0);
    return this;
  }

  @Test
  void aWriteUnderAReadHoldIsFoundAndSharedHoldsAreNoExclusiveHolds() {
    // two readers share L while no writer holds it; a writer before and after: nothing to report
    cycle("w", "L", 10, 0, 20, 0, 1).readHold("r1", "L", 25, 60, 1, 1).readHold("r2", "L", 30, 70, 1, 1)
        .cycle("w", "L", 11, 75, 90, 1, 2);
    Checkers.Findings clean = check(100);
    assertThat(clean.writesUnderReadHolds()).isEmpty();
    assertThat(clean.overlaps()).as("readers are not exclusive holds").isEmpty();
    assertThat(clean.acquisitions()).isEqualTo(2);

    // a writer inside r1's read hold (a broken read-write lock): version 1 at the first look, 2 at the second
    h.clear();
    cycle("w", "L", 10, 0, 20, 0, 1).readHold("r1", "L", 25, 60, 1, 2).cycle("w", "L", 11, 30, 50, 1, 2);
    Checkers.Findings broken = check(100);
    assertThat(broken.writesUnderReadHolds()).hasSize(1);
    Checkers.ReadHoldWrite w = broken.writesUnderReadHolds().get(0);
    assertThat(w.client()).isEqualTo("r1");
    assertThat(w.startNanos()).isEqualTo(26 * MS);
    assertThat(w.endNanos()).isEqualTo(59 * MS);
    assertThat(w.secondVersion()).isEqualTo(2);
    assertThat(broken.lostUpdates()).as("the writer itself lost nothing").isZero();
  }

  @Test
  void aKnownOverlapIsFoundWithItsLength() {
    // a holds L from 1 to 100 (conservatively); b holds it from 41 to 70: 29 ms of overlap
    cycle("a", "L", 10, 0, 100, 0, 1).cycle("b", "L", 11, 40, 70, 0, 2);
    Checkers.Findings f = check(120);
    assertThat(f.overlaps()).hasSize(1);
    assertThat(f.maxOverlapNanos()).isEqualTo(29 * MS);
    assertThat(f.overlaps().get(0).first().client()).isEqualTo("a");
    // a long hold overlapped by two short ones in turn: two pairs, and it overlapped for 9 + 9 ms in all
    h.clear();
    cycle("a", "L", 10, 0, 100, 0, 1).cycle("b", "L", 11, 10, 20, 0, 2).cycle("c", "L", 12, 30, 40, 2, 3);
    Checkers.Findings twice = check(120);
    assertThat(twice.overlaps()).hasSize(2);
    assertThat(twice.maxOverlapNanos()).isEqualTo(18 * MS);
    // holds touching only at an instant do not overlap; other locks never do
    h.clear();
    cycle("a", "L", 10, 0, 20, 0, 1).cycle("b", "L", 11, 19, 40, 1, 2).cycle("c", "M", 1, 5, 30, 0, 3);
    assertThat(check(50).overlaps()).isEmpty();
  }

  @Test
  void aKnownLostUpdateIsFound() {
    // a and b both read version 0; b writes 1, then a writes 2 on top of version 0: b's write is lost
    ev(0, "a", Op.ACQUIRE, Type.OK, "L", 1, 0, 0).ev(1, "a", Op.READ, Type.OK, "L", 1, 0, 0);
    ev(2, "b", Op.ACQUIRE, Type.OK, "L", 2, 0, 0).ev(3, "b", Op.READ, Type.OK, "L", 2, 0, 0);
    ev(4, "b", Op.WRITE, Type.OK, "L", 2, 1, 0).ev(5, "a", Op.WRITE, Type.OK, "L", 1, 2, 0);
    // then c reads 2 and writes 3: nothing more lost
    ev(6, "c", Op.WRITE, Type.OK, "L", 3, 3, 2);
    assertThat(Checkers.lostUpdates(h)).isEqualTo(1);
    // a chain where every write read its predecessor loses nothing
    h.clear();
    ev(1, "a", Op.WRITE, Type.OK, "L", 1, 7, 0).ev(2, "b", Op.WRITE, Type.OK, "L", 2, 8, 7)
        .ev(3, "a", Op.WRITE, Type.OK, "L", 3, 9, 8);
    assertThat(Checkers.lostUpdates(h)).isZero();
  }

  @Test
  void aTokenRegressionIsFoundOnlyForDefinitelyLaterGrants() {
    cycle("a", "L", 100, 0, 20, 0, 1).cycle("b", "L", 50, 30, 40, 1, 2);
    Checkers.Findings f = check(50);
    assertThat(f.regressions()).hasSize(1);
    assertThat(f.regressions().get(0).later().token()).isEqualTo(50);
    assertThat(f.regressions().get(0).earlier().token()).isEqualTo(100);
    // b invoked before a's grant completed: concurrent, no order to judge
    h.clear();
    ev(0, "b", Op.ACQUIRE, Type.INVOKE, "L", 0, 0, 0).ev(1, "a", Op.ACQUIRE, Type.INVOKE, "L", 0, 0, 0)
        .ev(2, "a", Op.ACQUIRE, Type.OK, "L", 100, 0, 0).ev(3, "a", Op.RELEASE, Type.INVOKE, "L", 100, 0, 0)
        .ev(4, "b", Op.ACQUIRE, Type.OK, "L", 50, 0, 0).ev(5, "b", Op.RELEASE, Type.INVOKE, "L", 50, 0, 0);
    assertThat(check(10).regressions()).isEmpty();
    // an equal token is a regression too
    h.clear();
    cycle("a", "L", 7, 0, 10, 0, 1).cycle("b", "L", 7, 20, 30, 1, 2);
    assertThat(check(40).regressions()).hasSize(1);
  }

  @Test
  void staleWritesAreSplitIntoAcceptedAndRejected() {
    // a is granted and reads; b is granted later, reads and writes; then a writes: stale
    ev(0, "a", Op.ACQUIRE, Type.INVOKE, "L", 0, 0, 0).ev(1, "a", Op.ACQUIRE, Type.OK, "L", 1, 0, 0)
        .ev(2, "a", Op.READ, Type.OK, "L", 1, 0, 0);
    ev(10, "b", Op.ACQUIRE, Type.INVOKE, "L", 0, 0, 0).ev(11, "b", Op.ACQUIRE, Type.OK, "L", 2, 0, 0)
        .ev(12, "b", Op.READ, Type.OK, "L", 2, 0, 0).ev(13, "b", Op.WRITE, Type.OK, "L", 2, 1, 0);
    ev(20, "a", Op.WRITE, Type.OK, "L", 1, 2, 0).ev(21, "a", Op.RELEASE, Type.INVOKE, "L", 1, 0, 0);
    ev(22, "b", Op.RELEASE, Type.INVOKE, "L", 2, 0, 0);
    Checkers.Findings f = check(30);
    assertThat(f.staleWritesAccepted()).isEqualTo(1);
    assertThat(f.lostUpdates()).isEqualTo(1);
    assertThat(f.overlaps()).hasSize(1);
    // the same with a fence: a's write is refused and recorded as a failed write
    h.removeIf(e -> e.client().equals("a") && e.op() == Op.WRITE);
    ev(20, "a", Op.WRITE, Type.FAIL, "L", 1, 0, 0);
    f = check(30);
    assertThat(f.staleWritesAccepted()).isZero();
    assertThat(f.staleWritesRejected()).isEqualTo(1);
    assertThat(f.lostUpdates()).isZero();
    assertThat(f.overlaps()).hasSize(1); // the lock still overlapped; the fence kept the data right
  }

  @Test
  void aHoldNeverReleasedEndsAtItsClientsLastEventAndIndeterminateGrantsAreNoHolds() {
    ev(0, "a", Op.ACQUIRE, Type.INVOKE, "L", 0, 0, 0).ev(1, "a", Op.ACQUIRE, Type.OK, "L", 1, 0, 0)
        .ev(5, "a", Op.READ, Type.OK, "L", 1, 0, 0); // then a's JVM was killed
    ev(2, "b", Op.ACQUIRE, Type.INVOKE, "L", 0, 0, 0).ev(3, "b", Op.ACQUIRE, Type.INFO, "L", 0, 0, 0);
    ev(10, "c", Op.ACQUIRE, Type.INVOKE, "L", 0, 0, 0).ev(11, "c", Op.ACQUIRE, Type.OK, "L", 2, 0, 0)
        .ev(12, "c", Op.RELEASE, Type.INVOKE, "L", 2, 0, 0);
    Checkers.Findings f = check(20);
    assertThat(f.holds()).hasSize(2);
    assertThat(f.holds().get(0).endNanos()).isEqualTo(5 * MS);
    assertThat(f.holds().get(0).released()).isFalse();
    assertThat(f.overlaps()).isEmpty();
    assertThat(f.acquireIndeterminate()).isEqualTo(1);
  }

  @Test
  void unavailabilityIsTheLongestGapTouchingAFaultAndTheLongestGapIsReportedApart() {
    cycle("a", "L", 1, 0, 10, 0, 1).cycle("a", "L", 2, 200, 210, 1, 2) // gap 200 ms, no fault
        .cycle("a", "L", 3, 280, 290, 2, 3).cycle("a", "L", 4, 295, 300, 3, 4); // gap 80 ms spans the fault
    ev(230, "nemesis", Op.FAULT, Type.INVOKE, "", 0, 0, 0).ev(240, "nemesis", Op.FAULT, Type.OK, "", 0, 0, 0);
    // b waits for L from 5 to 150 and from 210 to 285, timing out both times
    ev(5, "b", Op.ACQUIRE, Type.INVOKE, "L", 0, 0, 0).ev(150, "b", Op.ACQUIRE, Type.FAIL, "L", 0, 0, 0);
    ev(210, "b", Op.ACQUIRE, Type.INVOKE, "L", 0, 0, 0).ev(285, "b", Op.ACQUIRE, Type.FAIL, "L", 0, 0, 0);
    Checkers.Findings f = check(305);
    assertThat(f.faults()).hasSize(1);
    assertThat(f.maxUnavailableNanos()).isEqualTo(71 * MS); // 210..281 (the next grant): waited in the gap over the fault
    assertThat(f.maxGapNanos()).isEqualTo(200 * MS);
    // without faults, unavailability is the longest wait in any gap: 5..150
    h.removeIf(e -> e.op() == Op.FAULT);
    assertThat(check(305).maxUnavailableNanos()).isEqualTo(145 * MS);
  }

  @Test
  void aStaleWriteIsJudgedByRegisterOrderEvenIfTheSupersederWaitedFromTheStart() {
    // review P3: b waits before a is granted (so b is not "definitely later"), is granted after a's lease
    // ran out, reads and writes; then a writes what it read before b: stale, and b's update is lost
    ev(0, "b", Op.ACQUIRE, Type.INVOKE, "L", 0, 0, 0);
    ev(1, "a", Op.ACQUIRE, Type.INVOKE, "L", 0, 0, 0).ev(2, "a", Op.ACQUIRE, Type.OK, "L", 10, 0, 0)
        .ev(3, "a", Op.READ, Type.OK, "L", 10, 0, 0);
    ev(3000, "b", Op.ACQUIRE, Type.OK, "L", 11, 0, 0).ev(3001, "b", Op.READ, Type.OK, "L", 11, 0, 0)
        .ev(3002, "b", Op.WRITE, Type.OK, "L", 11, 1, 0).ev(3003, "b", Op.RELEASE, Type.INVOKE, "L", 11, 0, 0);
    ev(5000, "a", Op.WRITE, Type.OK, "L", 10, 2, 0).ev(5001, "a", Op.RELEASE, Type.INVOKE, "L", 10, 0, 0);
    Checkers.Findings f = check(6000);
    assertThat(f.overlaps()).hasSize(1);
    assertThat(f.lostUpdates()).isEqualTo(1);
    assertThat(f.staleWritesAccepted()).isEqualTo(1);
    assertThat(f.staleWritesAcceptedByLock()).containsEntry("L", 1);
    assertThat(f.lostUpdatesByLock()).containsEntry("L", 1);
  }

  @Test
  void aWriteIsNotStaleWhenNoOtherHolderTouchedTheRegisterSinceItsFirstTouch() {
    // b is granted while a still holds (an overlap), but touches the register only after a's write
    ev(0, "a", Op.ACQUIRE, Type.INVOKE, "L", 0, 0, 0).ev(1, "a", Op.ACQUIRE, Type.OK, "L", 10, 0, 0)
        .ev(2, "a", Op.READ, Type.OK, "L", 10, 0, 0);
    ev(5, "b", Op.ACQUIRE, Type.INVOKE, "L", 0, 0, 0).ev(6, "b", Op.ACQUIRE, Type.OK, "L", 11, 0, 0);
    ev(8, "a", Op.WRITE, Type.OK, "L", 10, 1, 0).ev(9, "a", Op.RELEASE, Type.INVOKE, "L", 10, 0, 0);
    ev(10, "b", Op.READ, Type.OK, "L", 11, 1, 0).ev(11, "b", Op.WRITE, Type.OK, "L", 11, 2, 1)
        .ev(12, "b", Op.RELEASE, Type.INVOKE, "L", 11, 0, 0);
    // another lock touched in between never makes a write stale
    ev(7, "c", Op.ACQUIRE, Type.OK, "M", 3, 0, 0).ev(7, "c", Op.READ, Type.OK, "M", 3, 0, 0);
    Checkers.Findings f = check(20);
    assertThat(f.overlaps()).hasSize(1);
    assertThat(f.staleWritesAccepted()).isZero();
    assertThat(f.lostUpdates()).isZero();
  }
}
