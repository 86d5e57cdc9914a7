package io.locksmith.check;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.check.Event.Op;
import io.locksmith.check.Event.Type;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link Checkers#lossSignals}: for each grant of a lock to another client while the previous holder had
 * not begun to release, whether that holder's lease reported itself lost before the grant, and by how much.
 */
@Tag("unit")
class LossSignalsTest {
  private static final long MS = 1_000_000;
  private final List<Event> h = new ArrayList<>();

  private void ev(long ms, String client, Op op, Type type, String lock, long token) {
    h.add(new Event(ms * MS, client, op, type, lock, token, 0, 0, ""));
  }

  @Test
  void aLossReportedBeforeTheNextGrantGivesAPositiveMargin() {
    ev(0, "a", Op.ACQUIRE, Type.OK, "x", 1);
    ev(100, "a", Op.LOST, Type.OK, "x", 1);
    ev(150, "b", Op.ACQUIRE, Type.OK, "x", 2);
    ev(200, "a", Op.RELEASE, Type.INVOKE, "x", 1); // the lost holder releases late: still a loss
    ev(300, "b", Op.RELEASE, Type.INVOKE, "x", 2); // released normally: the next grant is no loss
    ev(310, "a", Op.ACQUIRE, Type.OK, "x", 3);
    Checkers.LossSignals s = Checkers.lossSignals(h);
    assertThat(s.grantsAfterUnreleasedHold()).isEqualTo(1);
    assertThat(s.lostBefore()).isEqualTo(1);
    assertThat(s.lostAfter()).isZero();
    assertThat(s.notReported()).isZero();
    assertThat(s.minMarginNanos()).isEqualTo(50 * MS);
  }

  @Test
  void aLossReportedAfterTheNextGrantOrNeverIsCountedAsSuch() {
    ev(0, "a", Op.ACQUIRE, Type.OK, "x", 1);
    ev(50, "b", Op.ACQUIRE, Type.OK, "x", 2); // a paused holder: its lease reports later
    ev(80, "a", Op.LOST, Type.OK, "x", 1);
    ev(90, "c", Op.ACQUIRE, Type.OK, "y", 7);
    ev(95, "d", Op.ACQUIRE, Type.OK, "y", 8); // c killed: it never reports
    ev(96, "a", Op.LOST, Type.OK, "x", 99); // another lease's report changes nothing
    Checkers.LossSignals s = Checkers.lossSignals(h);
    assertThat(s.grantsAfterUnreleasedHold()).isEqualTo(2);
    assertThat(s.lostBefore()).isZero();
    assertThat(s.lostAfter()).isEqualTo(1);
    assertThat(s.notReported()).isEqualTo(1);
    assertThat(s.minMarginNanos()).isEqualTo(-30 * MS);
  }

  @Test
  void grantsAfterAFaultVictimsHoldAreCountedApart() {
    ev(0, "a", Op.ACQUIRE, Type.OK, "x", 1);
    h.add(new Event(10 * MS, "nemesis", Op.FAULT, Type.INVOKE, "x", 0, 0, 0, "blackhole" + Checkers.victimTag("a")));
    ev(100, "a", Op.LOST, Type.OK, "x", 1);
    ev(120, "b", Op.ACQUIRE, Type.OK, "x", 2); // after the victim's hold: 20 ms
    h.add(new Event(130 * MS, "nemesis", Op.FAULT, Type.OK, "x", 0, 0, 0, ""));
    ev(200, "c", Op.ACQUIRE, Type.OK, "y", 5);
    ev(250, "c", Op.LOST, Type.OK, "y", 5);
    ev(260, "d", Op.ACQUIRE, Type.OK, "y", 6); // after a hold no fault aimed at (a stalled JVM): 10 ms
    Checkers.LossSignals s = Checkers.lossSignals(h);
    assertThat(s.marginsNanos()).containsExactly(20 * MS, 10 * MS);
    assertThat(s.victimMarginsNanos()).containsExactly(20 * MS);
    assertThat(s.victimNotReported()).isZero();
  }

  @Test
  void aLossReportedAfterTheNextGrantIsCountedApartWhenItsHoldWasHeldDuringAFault() {
    ev(0, "a", Op.ACQUIRE, Type.OK, "x", 1); // the victim
    ev(5, "e", Op.ACQUIRE, Type.OK, "z", 3); // another client on the cut member: not the victim, also held
    h.add(new Event(10 * MS, "nemesis", Op.FAULT, Type.INVOKE, "x", 0, 0, 0, "cut" + Checkers.victimTag("a")));
    ev(120, "b", Op.ACQUIRE, Type.OK, "x", 2);
    ev(125, "f", Op.ACQUIRE, Type.OK, "z", 4);
    ev(130, "a", Op.LOST, Type.OK, "x", 1); // told 10 ms after b's grant
    ev(131, "e", Op.LOST, Type.OK, "z", 3); // told 6 ms after f's grant
    h.add(new Event(300 * MS, "nemesis", Op.FAULT, Type.OK, "x", 0, 0, 0, ""));
    ev(400, "c", Op.ACQUIRE, Type.OK, "y", 5);
    ev(450, "d", Op.ACQUIRE, Type.OK, "y", 6);
    ev(460, "c", Op.LOST, Type.OK, "y", 5); // a hold far from the fault, told late: a stalled JVM
    Checkers.LossSignals s = Checkers.lossSignals(h);
    assertThat(s.lostAfter()).isEqualTo(3);
    assertThat(s.faultLostAfter()).isEqualTo(2);
    assertThat(s.victimMarginsNanos()).containsExactly(-10 * MS);
  }

  @Test
  void withoutLossesThereIsNoMargin() {
    ev(0, "a", Op.ACQUIRE, Type.OK, "x", 1);
    ev(10, "a", Op.RELEASE, Type.INVOKE, "x", 1);
    ev(20, "b", Op.ACQUIRE, Type.OK, "x", 2);
    Checkers.LossSignals s = Checkers.lossSignals(h);
    assertThat(s.grantsAfterUnreleasedHold()).isZero();
    assertThat(s.minMarginNanos()).isEqualTo(Long.MAX_VALUE);
  }
}
