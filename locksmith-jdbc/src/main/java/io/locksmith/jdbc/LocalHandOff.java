package io.locksmith.jdbc;

import java.util.concurrent.ConcurrentHashMap;

/**
 * PostgreSQL: the bookkeeping of local hand-offs ({@link io.locksmith.spi.HandOffOps}) for one client.
 * The core picks the waiting acquisition of this client that a release hands the lock to; the backend
 * decides whether it does, and {@link PgRelease} runs the statements ({@link PgRelease#releaseAndHandOff}).
 *
 * <p>The cohort rule: after {@link #COHORT} hand-offs in a row on a name, the next release is a plain one
 * that wakes the oldest registered waiter of <em>another</em> client (if there is one) and then keeps this
 * client's own acquisitions of the name away from the database for {@link #RESERVATION_MILLIS}: they
 * register as waiters and are refused without asking, so that the woken waiter, whose notification and
 * round trip take longer than this client's next local ask, finds the lock free. The reservation ends
 * early when a release wakes one of this client's registered waiters of the name (the other client's
 * turn is over: it released and chose us). Runs are counted here,
 * not in the database: only this client hands off among its own owners, so a run on a name is a run of
 * this client. A reservation binds only this client; the others never see it. Both are hints for
 * fairness, never for safety: every grant is still the database's, owner-checked, with a new token.
 * Thread-safe.
 */
final class LocalHandOff {
  /**
   * Hand-offs in a row before a release is a plain one that lets a waiter of another client in. The
   * same number as the Redis backend's: long enough that the run's saved round trips dominate, short
   * enough that another client waits at most eight of this client's holds (and a reservation) per turn.
   */
  static final int COHORT = 8;
  /**
   * How long the run's last release keeps this client's acquisitions of the name away from the
   * database, at most: a notification, the woken client's wake-up and its grant statement take a few ms,
   * but hundreds on a loaded machine. It normally ends sooner, at the other client's release (which wakes
   * a waiter of ours); a woken waiter that died costs this client at most this long.
   */
  static final long RESERVATION_MILLIS = 500;

  /** Hand-offs granted in all, for tests and diagnostics. */
  private final java.util.concurrent.atomic.LongAdder granted = new java.util.concurrent.atomic.LongAdder();
  /** Hand-offs in a row per name; absent: none since the last plain release or grant. */
  private final ConcurrentHashMap<String, Integer> runs = new ConcurrentHashMap<>();
  /** {@code System.nanoTime()} until which this client leaves a name to the waiter of another client it woke. */
  private final ConcurrentHashMap<String, Long> reservedUntil = new ConcurrentHashMap<>();

  /** @return whether the run on {@code name} reached the cohort limit (the next release ends it) */
  boolean cohortDone(String name) {
    Integer run = runs.get(name);
    return run != null && run >= COHORT;
  }

  /** A hand-off on {@code name} was granted: the run grows by one. */
  void handedOff(String name) {
    runs.merge(name, 1, Integer::sum);
    granted.increment();
  }

  /** @return how many hand-offs this client was granted so far */
  long granted() {
    return granted.sum();
  }

  /** A plain release or a grant by asking ended the run on {@code name}. */
  void runEnded(String name) {
    if (!runs.isEmpty()) {
      runs.remove(name);
    }
  }

  /** The run's last release woke a waiter of another client: leave it the lock for a while. */
  void reserve(String name) {
    reservedUntil.put(name, System.nanoTime() + RESERVATION_MILLIS * 1_000_000L);
  }

  /** A release woke a waiter of this client for {@code name}: the reservation, if any, is over. */
  void woken(String name) {
    if (!reservedUntil.isEmpty()) {
      reservedUntil.remove(name);
    }
  }

  /**
   * @return the ms left of this client's reservation of {@code name} for another client's waiter, or 0
   *     if there is none (this client may ask the database)
   */
  long reservedMillis(String name) {
    if (reservedUntil.isEmpty()) {
      return 0;
    }
    Long until = reservedUntil.get(name);
    if (until == null) {
      return 0;
    }
    long left = until - System.nanoTime();
    if (left <= 0) {
      reservedUntil.remove(name, until);
      return 0;
    }
    return Math.max(1, left / 1_000_000L);
  }
}
