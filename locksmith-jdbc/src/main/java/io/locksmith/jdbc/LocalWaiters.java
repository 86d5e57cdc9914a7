package io.locksmith.jdbc;

import io.locksmith.spi.WakeupSink;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * This client's waiting acquisitions, as the backend sees them: each refused attempt that carries a
 * waiter id registers it here until it is granted or cancelled. It gives polling waiters their capped
 * exponential backoff with jitter, lets a release in this client wake a local waiter at once (no poll
 * needed within one process), and lets the PostgreSQL listener wake every local waiter after it
 * reconnected (notifications sent while it was away are lost). Thread-safe.
 */
final class LocalWaiters {
  record Waiter(char kind, String name, String waiterId, long seq, int attempts) {}

  private final ConcurrentHashMap<String, Waiter> waiters = new ConcurrentHashMap<>();
  private final AtomicLong seq = new AtomicLong();
  private final WakeupSink sink;

  LocalWaiters(WakeupSink sink) {
    this.sink = sink;
  }

  /**
   * Records a refused attempt of {@code waiterId}.
   *
   * @return how many refused attempts it has had before this one
   */
  int refused(char kind, String name, String waiterId) {
    Waiter w = waiters.compute(waiterId, (id, old) -> old == null
        ? new Waiter(kind, name, id, seq.incrementAndGet(), 0)
        : new Waiter(kind, name, id, old.seq(), old.attempts() + 1));
    return w.attempts();
  }

  /** @return whether {@code waiterId} was refused before and is still waiting (it may be registered) */
  boolean knows(String waiterId) {
    return waiterId != null && waiters.containsKey(waiterId);
  }

  void remove(String waiterId) {
    if (waiterId != null) {
      waiters.remove(waiterId);
    }
  }

  /**
   * The polling delay after a refusal: {@code min} doubled per earlier refusal up to {@code max}, a
   * random point in its upper half (jitter, so waiters of many clients spread out), and never later than
   * just after the holder's lease runs out.
   */
  static long pollDelay(int attempts, long minMillis, long maxMillis, long holderRemainingMillis) {
    long backoff = minMillis << Math.min(attempts, 20);
    backoff = Math.min(maxMillis, Math.max(minMillis, backoff));
    long jittered = backoff / 2 + ThreadLocalRandom.current().nextLong(backoff / 2 + 1);
    if (holderRemainingMillis >= 0) {
      jittered = Math.min(jittered, holderRemainingMillis + 1);
    }
    return Math.max(1, jittered);
  }

  /**
   * Wakes up to {@code count} local waiters of a lock, oldest first; a waiter that is gone is dropped and
   * the next one tried.
   *
   * @return how many were woken
   */
  int wake(char kind, String name, int count) {
    if (count <= 0) {
      return 0;
    }
    List<Waiter> candidates = new ArrayList<>();
    for (Waiter w : waiters.values()) {
      if (w.kind() == kind && w.name().equals(name)) {
        candidates.add(w);
      }
    }
    candidates.sort(Comparator.comparingLong(Waiter::seq));
    int woken = 0;
    for (Waiter w : candidates) {
      if (woken >= count) {
        break;
      }
      if (waiters.remove(w.waiterId(), w) && sink.wake(name, w.waiterId())) {
        woken++;
      }
    }
    return woken;
  }

  /** Wakes every local waiter (each re-checks once); after a lost notification connection. */
  void wakeAll() {
    for (Waiter w : new ArrayList<>(waiters.values())) {
      sink.wake(w.name(), w.waiterId());
    }
  }
}
