package io.locksmith.check;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The recorder: collects events from harness threads and from child JVMs (which stamp with the same
 * monotonic clock). Thread-safe. {@link #snapshot()} returns the events ordered by stamp, ties in
 * arrival order.
 */
final class History {
  private final List<Event> events = new ArrayList<>();

  synchronized void add(Event e) {
    events.add(e);
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
