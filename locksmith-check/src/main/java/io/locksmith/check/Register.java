package io.locksmith.check;

import io.locksmith.FenceGuard;
import io.locksmith.StaleTokenException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
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

  /** How long a held read reply waits at most for {@link Chosen#release()}, so a lost release never hangs a run. */
  static final long HELD_REPLY_MAX_MILLIS = 10_000;

  /**
   * The holder a fault picked: it has just read {@code lock} under the lock. If the victim was chosen with
   * a held reply, its read does not return until {@link #release()} (or {@link #HELD_REPLY_MAX_MILLIS}).
   */
  record Chosen(String client, String lock, CompletableFuture<Void> reply) {
    /** Lets the victim's read return. Idempotent. */
    void release() {
      reply.complete(null);
    }
  }

  private record Victim(Predicate<String> eligible, long thinkMillis, boolean holdReply,
      CompletableFuture<Chosen> chosen) {}

  private final boolean fenced;
  private final History history;
  private final long thinkMinMillis;
  private final long thinkMaxMillis;
  private final FenceGuard guard = new FenceGuard();
  private final ConcurrentHashMap<String, long[]> cells = new ConcurrentHashMap<>();
  private final AtomicLong versions = new AtomicLong();
  /** Claimed by compare-and-set: reads of different locks run at once, and only one may become the victim. */
  private final AtomicReference<Victim> victim = new AtomicReference<>();
  private volatile long longestThink;

  Register(boolean fenced, History history, long thinkMinMillis, long thinkMaxMillis) {
    this.fenced = fenced;
    this.history = history;
    this.thinkMinMillis = thinkMinMillis;
    this.thinkMaxMillis = thinkMaxMillis;
  }

  /**
   * The next client accepted by {@code eligible} that reads successfully thinks for {@code thinkMillis}
   * and completes the returned future with its id (inside the read, before the reply is sent). With
   * {@code holdReply}, the victim's read then waits for {@link Chosen#release()} before it returns, so a
   * fault can be put in place while the victim is certainly still in its critical section.
   */
  CompletableFuture<Chosen> chooseVictim(Predicate<String> eligible, long thinkMillis, boolean holdReply) {
    Victim v = new Victim(eligible, thinkMillis, holdReply, new CompletableFuture<>());
    victim.set(v);
    return v.chosen();
  }

  /** @return the longest think time handed out so far */
  long longestThink() {
    return longestThink;
  }

  void cancelVictim() {
    victim.set(null);
  }

  ReadResult read(String client, String lock, long token) {
    history.record(client, Event.Op.READ, Event.Type.INVOKE, lock, token, 0, 0, "");
    CompletableFuture<Void> held = new CompletableFuture<>();
    ReadResult result = read(client, lock, token, held);
    if (!held.isDone()) { // chosen as a victim with a held reply: wait outside the register's monitor
      try {
        held.get(HELD_REPLY_MAX_MILLIS, java.util.concurrent.TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
        // reply anyway: the fault was not put in place in time
      }
    }
    return result;
  }

  private ReadResult read(String client, String lock, long token, CompletableFuture<Void> held) {
    long[] cell = cells.computeIfAbsent(lock, k -> new long[1]);
    synchronized (cell) {
      if (fenced) {
        try {
          guard.admit(lock, token);
        } catch (StaleTokenException e) {
          history.record(client, Event.Op.READ, Event.Type.FAIL, lock, token, 0, 0, "stale: " + e.highestSeen());
          held.complete(null);
          return new ReadResult(true, 0, 0);
        }
      }
      long think = thinkMinMillis >= thinkMaxMillis ? thinkMinMillis
          : ThreadLocalRandom.current().nextLong(thinkMinMillis, thinkMaxMillis + 1);
      Victim v = victim.get();
      // a second reader that also saw v would hold its reply with nobody to release it, stalling its JVM
      if (v != null && v.eligible().test(client) && victim.compareAndSet(v, null)) {
        think = Math.max(think, v.thinkMillis());
        if (!v.holdReply()) {
          held.complete(null);
        }
        v.chosen().complete(new Chosen(client, lock, held));
      } else {
        held.complete(null);
      }
      if (think > longestThink) {
        longestThink = think;
      }
      history.record(client, Event.Op.READ, Event.Type.OK, lock, token, cell[0], 0, "");
      return new ReadResult(false, cell[0], think);
    }
  }

  /** The detail of a reader's second look at the register within one read hold. */
  static final String AGAIN = "again";

  /**
   * A reader's look at the register while it holds the read side of a read-write lock: no fence, no think
   * time, never a fault's victim; only recorded (in the register's order), so that the checker can tell
   * whether a write landed between a reader's two looks (see {@link Checkers#writesUnderReadHolds}).
   *
   * @param again false for the first look of a hold, true for the second
   * @param firstVersion with {@code again}, what the first look saw
   * @return the version seen
   */
  long peek(String client, String lock, boolean again, long firstVersion) {
    long[] cell = cells.computeIfAbsent(lock, k -> new long[1]);
    synchronized (cell) {
      history.record(client, Event.Op.PEEK, Event.Type.OK, lock, 0, cell[0], again ? firstVersion : 0,
          again ? AGAIN : "");
      return cell[0];
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
