package io.locksmith.jdbc;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides when a grant whose reply came after its call timed out (a commit stalled on a synchronous
 * standby or on fsync, a slow link) may be given back. The core retries an acquisition that heard no
 * answer with the <em>same</em> owner id, and the backends grant such an attempt the hold the unanswered
 * one left (one owner, one hold). A give-back is a release by owner id, so it would free the hold of a
 * later attempt of the same acquisition that was granted meanwhile, with its lease {@code HELD}: two
 * holders. So, per lock and owner:
 *
 * <ul>
 *   <li>a late grant is given back only when no attempt of that owner is still running and none was
 *       granted in time since; if one is running, the give-back waits for it and is dropped if it is
 *       granted (the hold is then that attempt's lease);
 *   <li>while a give-back runs, the owner's next attempts wait at their gate until the give-back's work
 *       is over (answered or not), so its release can never land after their grant.
 * </ul>
 *
 * A late grant that is not given back stays with the acquisition that was granted (it is the same hold),
 * or, if none was, expires with its lease: at worst availability, never a second holder. An entry lives
 * while an attempt or a give-back of its owner is in flight. Thread-safe.
 */
final class LateGrants {
  private static final Logger log = LoggerFactory.getLogger(LateGrants.class);
  private static final CompletableFuture<Void> OPEN = CompletableFuture.completedFuture(null);

  /** One lock and owner. Guarded by the enclosing {@link LateGrants}. */
  private static final class Entry {
    int inFlight;
    boolean grantedInTime;
    boolean giveBackDue;
    CompletableFuture<Void> quiet = OPEN;
  }

  private final Map<String, Entry> entries = new HashMap<>();

  /** One attempt: its key and the gate it waits at (an earlier give-back of the same owner). */
  record Attempt(String key, CompletionStage<Void> gate) {}

  static String key(char kind, String name, String owner) {
    return kind + "\n" + owner + "\n" + name;
  }

  /** Registers an attempt about to be sent; {@link #settled} must follow once its work is over. */
  synchronized Attempt begin(String key) {
    Entry e = entries.computeIfAbsent(key, k -> new Entry());
    e.inFlight++;
    return new Attempt(key, e.quiet);
  }

  /**
   * Registers a release of {@code key}'s owner about to be sent (the holder's, or a give-back the core
   * asked for): the owner's next attempts wait at their gate until it is over.
   *
   * @return to complete once the release's work is over (answered or not)
   */
  synchronized CompletableFuture<Void> releasing(String key) {
    Entry e = entries.computeIfAbsent(key, k -> new Entry());
    CompletableFuture<Void> done = new CompletableFuture<>();
    e.quiet = e.quiet.isDone() ? done : CompletableFuture.allOf(e.quiet, done);
    CompletableFuture<Void> quiet = e.quiet;
    quiet.whenComplete((v, f) -> tidy(key, quiet));
    return done;
  }

  /**
   * The attempt's work is over.
   *
   * @param granted whether it was granted
   * @param answered whether its caller received the reply (false: the reply came late, or never)
   * @param giveBack releases the owner's hold; returns a stage that completes once that release's work is
   *     over (not merely timed out)
   */
  void settled(Attempt attempt, boolean granted, boolean answered, Supplier<CompletionStage<?>> giveBack) {
    CompletableFuture<Void> done;
    synchronized (this) {
      Entry e = entries.get(attempt.key());
      if (e == null) {
        return; // never begun
      }
      e.inFlight--;
      if (granted && answered) {
        e.grantedInTime = true;
        e.giveBackDue = false;
      } else if (granted && !e.grantedInTime) {
        e.giveBackDue = true;
      } else if (granted) {
        log.debug("a late grant of {} is the hold a later attempt was granted in time: kept", printable(attempt));
      }
      if (e.inFlight > 0 || !e.giveBackDue) {
        if (e.inFlight == 0 && e.quiet.isDone() && !e.giveBackDue) {
          entries.remove(attempt.key());
        }
        return;
      }
      e.giveBackDue = false;
      done = new CompletableFuture<>();
      e.quiet = e.quiet.isDone() ? done : CompletableFuture.allOf(e.quiet, done);
      CompletableFuture<Void> quiet = e.quiet;
      quiet.whenComplete((v, f) -> tidy(attempt.key(), quiet));
    }
    log.debug("giving back {}: granted after its call timed out, and no later attempt holds it", printable(attempt));
    CompletionStage<?> release;
    try {
      release = giveBack.get();
    } catch (RuntimeException ex) {
      release = CompletableFuture.failedFuture(ex);
    }
    release.whenComplete((v, f) -> done.complete(null));
  }

  private synchronized void tidy(String key, CompletableFuture<Void> quiet) {
    Entry e = entries.get(key);
    if (e != null && e.quiet == quiet && quiet.isDone() && e.inFlight == 0 && !e.giveBackDue) {
      entries.remove(key);
    }
  }

  /** For tests: how many lock-and-owner entries are open. */
  synchronized int open() {
    return entries.size();
  }

  private static String printable(Attempt a) {
    return a.key().replace('\n', ' ');
  }
}
