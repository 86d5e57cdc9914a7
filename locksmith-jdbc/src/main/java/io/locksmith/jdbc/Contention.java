package io.locksmith.jdbc;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Which lock names this client saw contended lately (a refusal, a waiter registered, a waiter mark
 * found at a release), in a fixed table of slots by the name's hash: names that share a slot share
 * their history. Only a hint for choosing between two equally correct ways of asking the database: an
 * uncontended name gets the cheap statements (a plain grant, a release without the wake-up query), a
 * contended one the statements that do everything in one round trip. A wrong hint costs one round
 * trip, never a wrong answer. Bounded memory; thread-safe.
 */
final class Contention {
  /** How long a name counts as contended after it was last seen so. */
  static final long RECENT_NANOS = 2_000_000_000L;
  /**
   * {@link #RECENT_NANOS}, or 0 in tests that want the cheap statements taken every time (both ways are
   * correct; a test of the cheap ones under contention sets it).
   */
  static volatile long recentNanos = RECENT_NANOS;
  private static final int SLOTS = 1024;
  /** {@code System.nanoTime()} of the slot's last contention; 0: never. */
  private final AtomicLongArray seen = new AtomicLongArray(SLOTS);

  private static int slot(String name) {
    int h = name.hashCode();
    return (h ^ (h >>> 16)) & (SLOTS - 1);
  }

  /** Notes that {@code name} is contended now. */
  void saw(String name) {
    long now = System.nanoTime();
    seen.set(slot(name), now == 0 ? 1 : now);
  }

  /** @return whether {@code name} (or a name sharing its slot) was seen contended within {@link #recentNanos} */
  boolean recent(String name) {
    long at = seen.get(slot(name));
    return at != 0 && System.nanoTime() - at < recentNanos;
  }
}
