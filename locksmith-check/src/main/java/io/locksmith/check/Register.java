package io.locksmith.check;

import io.locksmith.FenceGuard;
import io.locksmith.StaleTokenException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/**
 * The store the locks protect, kept in the harness, outside the lock service: one register per lock
 * name holding a version (the id of the last write applied, 0 initially). Every read and write is
 * recorded in the history while the register's monitor is held, so the history's order is the order
 * in which the register applied them.
 *
 * <p>Fenced mode admits the caller's token through a {@link FenceGuard} on reads and on writes (see the
 * guard's comment on why reads too). Unfenced mode ignores tokens.
 *
 * <p>The register also decides each holder's think time (returned with the read), so the nemesis can
 * pick a holder that has just read as its victim and give it a longer critical section. Thread-safe.
 */
final class Register {
  /** The result of a read: the version read, how long to think, or {@code stale} if fenced off. */
  record ReadResult(boolean stale, long version, long thinkMillis) {}

  /** The holder a fault picked: it has just read {@code lock} under the lock. */
  record Chosen(String client, String lock) {}

  private record Victim(Predicate<String> eligible, long thinkMillis, CompletableFuture<Chosen> chosen) {}

  private final boolean fenced;
  private final History history;
  private final long thinkMinMillis;
  private final long thinkMaxMillis;
  private final FenceGuard guard = new FenceGuard();
  private final ConcurrentHashMap<String, long[]> cells = new ConcurrentHashMap<>();
  private final AtomicLong versions = new AtomicLong();
  private volatile Victim victim;
  private volatile long longestThink;

  Register(boolean fenced, History history, long thinkMinMillis, long thinkMaxMillis) {
    this.fenced = fenced;
    this.history = history;
    this.thinkMinMillis = thinkMinMillis;
    this.thinkMaxMillis = thinkMaxMillis;
  }

  /**
   * The next client accepted by {@code eligible} that reads successfully thinks for {@code thinkMillis}
   * and completes the returned future with its id (inside the read, before the reply is sent).
   */
  CompletableFuture<Chosen> chooseVictim(Predicate<String> eligible, long thinkMillis) {
    Victim v = new Victim(eligible, thinkMillis, new CompletableFuture<>());
    victim = v;
    return v.chosen();
  }

  /** @return the longest think time handed out so far */
  long longestThink() {
    return longestThink;
  }

  void cancelVictim() {
    victim = null;
  }

  ReadResult read(String client, String lock, long token) {
    history.record(client, Event.Op.READ, Event.Type.INVOKE, lock, token, 0, 0, "");
    long[] cell = cells.computeIfAbsent(lock, k -> new long[1]);
    synchronized (cell) {
      if (fenced) {
        try {
          guard.admit(lock, token);
        } catch (StaleTokenException e) {
          history.record(client, Event.Op.READ, Event.Type.FAIL, lock, token, 0, 0, "stale: " + e.highestSeen());
          return new ReadResult(true, 0, 0);
        }
      }
      long think = thinkMinMillis >= thinkMaxMillis ? thinkMinMillis
          : ThreadLocalRandom.current().nextLong(thinkMinMillis, thinkMaxMillis + 1);
      Victim v = victim;
      if (v != null && v.eligible().test(client)) {
        victim = null;
        think = Math.max(think, v.thinkMillis());
        v.chosen().complete(new Chosen(client, lock));
      }
      if (think > longestThink) {
        longestThink = think;
      }
      history.record(client, Event.Op.READ, Event.Type.OK, lock, token, cell[0], 0, "");
      return new ReadResult(false, cell[0], think);
    }
  }

  /** @return true if applied, false if refused as stale by the fence */
  boolean write(String client, String lock, long token, long readFrom) {
    history.record(client, Event.Op.WRITE, Event.Type.INVOKE, lock, token, 0, readFrom, "");
    long[] cell = cells.computeIfAbsent(lock, k -> new long[1]);
    synchronized (cell) {
      long version = versions.incrementAndGet();
      if (fenced) {
        try {
          guard.apply(lock, token, () -> cell[0] = version);
        } catch (StaleTokenException e) {
          history.record(client, Event.Op.WRITE, Event.Type.FAIL, lock, token, 0, readFrom, "stale: " + e.highestSeen());
          return false;
        }
      } else {
        cell[0] = version;
      }
      history.record(client, Event.Op.WRITE, Event.Type.OK, lock, token, version, readFrom, "");
      return true;
    }
  }
}
