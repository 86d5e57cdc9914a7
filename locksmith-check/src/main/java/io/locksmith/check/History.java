package io.locksmith.check;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.BooleanSupplier;

/**
 * The recorder: collects events from harness threads and from child JVMs (which stamp with the same
 * monotonic clock). Thread-safe. {@link #snapshot()} returns the events ordered by stamp, ties in
 * arrival order.
 */
final class History {
  private final List<Event> events = new ArrayList<>();
  /** Progress counters for runs that end early ({@link CheckSettings#stopAfterInjections()}). */
  private final Set<String> grantedClients = new HashSet<>();
  private int grants;
  private int heals;
  private long lastHealNanos;
  private int grantsAfterLastHeal;

  synchronized void add(Event e) {
    events.add(e);
    if (e.op() == Event.Op.ACQUIRE && e.type() == Event.Type.OK) {
      grants++;
      grantedClients.add(e.client());
      if (heals > 0 && e.nanos() - lastHealNanos > 0) {
        grantsAfterLastHeal++;
      }
      notifyAll();
    } else if (e.op() == Event.Op.FAULT && e.type() == Event.Type.OK) {
      heals++;
      lastHealNanos = e.nanos();
      grantsAfterLastHeal = 0;
      notifyAll();
    }
  }

  /** @return locks granted so far */
  synchronized int grants() {
    return grants;
  }

  /** @return how many distinct clients were granted a lock so far */
  synchronized int grantedClients() {
    return grantedClients.size();
  }

  /** @return fault injections healed so far (their {@code FAULT ok} events) */
  synchronized int heals() {
    return heals;
  }

  /** @return grants stamped after the latest heal: the backend serves again */
  synchronized int grantsAfterLastHeal() {
    return grantsAfterLastHeal;
  }

  /**
   * Waits until {@code condition} holds, re-evaluated on every grant and heal and on {@link #wake()}.
   *
   * @return whether it held; false if {@code deadlineNanos} (on {@link System#nanoTime()}) passed first
   */
  synchronized boolean await(BooleanSupplier condition, long deadlineNanos) throws InterruptedException {
    while (!condition.getAsBoolean()) {
      long left = deadlineNanos - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      java.util.concurrent.TimeUnit.NANOSECONDS.timedWait(this, left);
    }
    return true;
  }

  /** Makes every {@link #await} re-evaluate its condition (e.g. because the run is stopping). */
  synchronized void wake() {
    notifyAll();
  }

  /** Stamps now and records. */
  Event record(String client, Event.Op op, Event.Type type, String lock, long token, long value, long readFrom,
      String detail) {
    Event e = new Event(System.nanoTime(), client, op, type, lock, token, value, readFrom, detail);
    add(e);
    return e;
  }

  synchronized int size() {
    return events.size();
  }

  List<Event> snapshot() {
    List<Event> copy;
    synchronized (this) {
      copy = new ArrayList<>(events);
    }
    copy.sort(Comparator.comparingLong(Event::nanos)); // stable: ties keep arrival order
    return List.copyOf(copy);
  }
}
