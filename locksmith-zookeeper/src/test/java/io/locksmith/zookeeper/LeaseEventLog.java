package io.locksmith.zookeeper;

import java.util.ArrayList;
import java.util.List;

/** Records what a backend reports about its leases, with the monotonic time of each report. */
final class LeaseEventLog implements LeaseEvents {
  /** One report. */
  record Event(String kind, String name, long nanos, String why) {}

  private final List<Event> events = new ArrayList<>();

  @Override
  public synchronized void uncertain(String why) {
    events.add(new Event("uncertain", null, System.nanoTime(), why));
  }

  @Override
  public synchronized void restored(String why) {
    events.add(new Event("restored", null, System.nanoTime(), why));
  }

  @Override
  public synchronized void lost(Side side, String name, String owner, String why) {
    events.add(new Event("lost", name, System.nanoTime(), why));
  }

  synchronized List<Event> events() {
    return List.copyOf(events);
  }

  /** @return the first report of {@code kind}, or null */
  synchronized Event first(String kind) {
    for (Event e : events) {
      if (e.kind().equals(kind)) {
        return e;
      }
    }
    return null;
  }

  synchronized List<String> kinds() {
    List<String> out = new ArrayList<>();
    events.forEach(e -> out.add(e.kind()));
    return out;
  }
}
