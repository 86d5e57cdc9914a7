package io.locksmith.internal;

import io.locksmith.BackendUnavailableException;
import io.locksmith.LockOptions;
import io.locksmith.spi.AcquireMode;
import io.locksmith.spi.AcquireReply;
import io.locksmith.spi.LockOps;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One attempt to acquire a lock within a wait, as a non-blocking state machine; the blocking methods
 * of both lock views wait on its {@link #result}.
 *
 * <p>Each round sends one acquire that also registers this waiter with the backend, so a release that
 * happens after the refusal wakes us (no window between "refused" and "subscribed": no lost wake-up).
 * A round ends with the wake-up, or with a backstop timer at the holder's remaining lease (in case the
 * wake-up is lost), or at the deadline, whichever comes first. A wake-up that arrives while a round is
 * in flight is remembered and causes one more round at once.
 *
 * <p>An attempt that fails with {@link BackendUnavailableException} (no answer within the command
 * timeout, connection down) does not end a wait: the acquisition tries again after a capped,
 * jittered backoff ({@link #retryDelayNanos}), never later than its deadline, and fails only when an
 * attempt at or after the deadline failed too, with a {@code BackendUnavailableException} that names
 * the wait and carries the last failure. {@code lock()} and {@code acquire()} have no deadline and so
 * never fail on an outage. An acquisition that may not wait fails with the first failure.
 *
 * <p>Every attempt of one acquisition uses the same owner id. An attempt that failed without an answer
 * may still have been applied (a hung server runs it when it resumes): the next attempt then finds the
 * lock held by its own owner, which the backend answers, in {@link AcquireMode#NEW}, as a grant with
 * one hold and the token of that hold, so the late grant simply becomes this acquisition's lease. If
 * the acquisition ends without a lease after such a failure, the owner id is released once the backend
 * answers again ({@link DefaultLockClient#giveBackUnanswered}), so that a grant applied after its
 * caller gave up does not keep the lock for a whole lease.
 */
final class Acquisition {
  private static final int WAITING = 0;
  private static final int IN_FLIGHT = 1;
  private static final int IN_FLIGHT_WOKEN = 2;
  /**
   * Claimed by a release of this client that hands the lock over to this acquisition in the same backend
   * step ({@link #claimForHandOff}); no round of its own is sent until {@link #handOffDone} says how it
   * ended. A wake-up meanwhile is remembered ({@link #HANDED_OFF_WOKEN}): the plain release a hand-off
   * turned into may have woken this very waiter, and the lock is then kept for it.
   */
  private static final int HANDED_OFF = 3;
  /** {@link #HANDED_OFF}, and a wake-up arrived meanwhile. */
  private static final int HANDED_OFF_WOKEN = 4;
  /** Upper bound of the random delay before retrying after a grant that came too late. */
  private static final long LATE_GRANT_RETRY_MILLIS = 50;
  /** Retry delay after the first failed attempt; it doubles with each further failure in a row. */
  static final long RETRY_BASE_MILLIS = 25;
  /**
   * Longest retry delay after failed attempts: the Redis client reconnects at least once a second
   * ({@code RedisBackend.MAX_RECONNECT_DELAY}), so waiting longer only adds delay after an outage.
   */
  static final long RETRY_CAP_MILLIS = 1000;
  private static final Logger log = LoggerFactory.getLogger(Acquisition.class);
  private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);

  private final DefaultLockClient client;
  private final LockOps ops;
  private final String name;
  private final LockOptions options;
  private final String owner;
  /** Whether {@link #owner} was minted for this acquisition (not borrowed from a write lease). */
  private final boolean freshOwner;
  private final String waiterId;
  /** The wait asked for, for messages only (a {@code Duration} is built when one is written). */
  private final long waitNanos;
  private final long deadline;
  /** Lease minus drift allowance: how long a grant is valid from its send, computed once. */
  private final long validNanos;
  private final boolean unbounded;
  /** Set once a backend wake-up reached this acquisition (a wake-up it must pass on if unused). */
  private volatile boolean woken;
  /**
   * Set once an attempt was sent and failed without an answer: it may have been applied on the server.
   * Read by {@link #finish} after the last round.
   */
  private volatile boolean unanswered;
  /** Failed attempts in a row; only the round in progress touches it. */
  private int failures;
  private final DefaultLockClient.HoldKey holdKey;
  private final AtomicInteger phase = new AtomicInteger(IN_FLIGHT);
  private volatile ScheduledFuture<?> timer;
  /**
   * The latest round (its reply's handling included), published before its attempt is sent;
   * {@code close()} and {@link #finish} wait for it.
   */
  private volatile CompletableFuture<?> round = CompletableFuture.completedFuture(null);
  /**
   * Set once the backend refused an attempt and registered this waiter (a release wakes it); never set
   * for an acquisition that waits locally only, behind a lease of its own client ({@link #startLocally}).
   */
  private volatile boolean registered;
  /** The round of the hand-off this acquisition was last claimed for. */
  private volatile CompletableFuture<Void> handOffRound;
  /**
   * Set once {@link #start()} or {@link #startLocally} ran: before, the acquisition is already in its
   * client's local queue but neither waits nor sends ({@link #askIfOnlyLocal} must not lose a request then).
   */
  private volatile boolean begun;
  /** When the re-check timer armed last fires ({@link System#nanoTime()}); guarded by this. */
  private long recheckDue;

  /** Completes with the lease, empty at the deadline, or exceptionally; may be cancelled. */
  final CompletableFuture<Optional<DefaultLease>> result = new CompletableFuture<>();
  /** Told of every reply the backend sends, before it is acted on; set before {@link #start()}. */
  private volatile java.util.function.Consumer<AcquireReply> observer;
  /** The backend's latest reply, for the message of a timeout (a semaphore's counts). */
  private volatile AcquireReply lastReply;

  /**
   * @param owner the owner id to acquire as (a downgrade's write owner), or null to mint a new one
   */
  Acquisition(DefaultLockClient client, LockOps ops, String name, LockOptions options, String owner,
      long waitNanos, DefaultLockClient.HoldKey holdKey) {
    this.client = client;
    this.ops = ops;
    this.name = name;
    this.options = options;
    this.freshOwner = owner == null;
    // one number for both ids (one counter step and one formatting fewer per acquisition)
    String sequence = owner == null || waitNanos > 0 ? client.nextSequence() : null;
    this.owner = owner != null ? owner : client.ownerId(sequence);
    this.holdKey = holdKey;
    this.waiterId = waitNanos > 0 ? client.waiterId(sequence) : null;
    this.waitNanos = waitNanos;
    // A wait too long for nanoseconds in a long arrives saturated (Long.MAX_VALUE) and means no bound.
    // Any other wait may push the deadline past Long.MAX_VALUE: it wraps, and the remaining time is
    // only ever taken as deadline - now, which the wrap leaves exact (as System.nanoTime() documents).
    this.unbounded = waitNanos == Long.MAX_VALUE;
    this.deadline = System.nanoTime() + (unbounded ? 0 : waitNanos);
    this.validNanos = options.leaseTime().toNanos() - client.marginNanos(options.leaseTime());
  }

  CompletableFuture<?> round() {
    return round;
  }

  String waiterId() {
    return waiterId;
  }

  String name() {
    return name;
  }

  LockOps ops() {
    return ops;
  }

  String owner() {
    return owner;
  }

  long leaseMillis() {
    return options.leaseTime().toMillis();
  }

  /**
   * Claims this acquisition for a local hand-off: only one that waits between rounds (refused, registered
   * with the backend, not in flight) with an owner id of its own can be claimed, and only once; its
   * backstop timer is cancelled. The claimer must call {@link #handOffDone} exactly once.
   *
   * @return whether it was claimed
   */
  boolean claimForHandOff() {
    if (!freshOwner || waiterId == null) {
      return false;
    }
    synchronized (this) { // pairs with nextRound's phase change and timer assignment
      if (!phase.compareAndSet(WAITING, HANDED_OFF)) {
        return false;
      }
      // published before the check below, as send() does: a close() or finish() that completes the result
      // after this point waits for the hand-off's outcome (and gives its grant back); one that completed
      // it before is seen here, and nothing is claimed
      CompletableFuture<?> previous = round;
      CompletableFuture<Void> handOff = new CompletableFuture<>();
      handOffRound = handOff;
      round = handOff;
      if (result.isDone()) {
        round = previous;
        phase.set(WAITING);
        handOff.complete(null);
        return false;
      }
      cancelTimer();
    }
    return true;
  }

  /**
   * The outcome of a hand-off this acquisition was claimed for: a grant becomes its lease as any grant
   * does (a caller that gave up meanwhile gives it back); a plain release instead (the backend's turn for
   * other clients) sends it back to waiting for a wake-up; a releaser that did not hold the lock, or no
   * answer, is followed by a round of its own at once. A hand-off without an answer may have been applied: the round then finds the lock
   * held by this owner and takes it as its grant, and an acquisition that ends without a lease gives the
   * owner back ({@link DefaultLockClient#giveBackUnanswered}).
   *
   * @param sentAt when the release that carried the hand-off was sent (the grant's validity runs from it)
   * @param releaserHeld whether the release found its lease still held (then a missing grant means the
   *     lock was released plainly and another waiter woken)
   * @param grant the grant, or null if none
   * @param failure why the release got no answer, or null
   */
  void handOffDone(long sentAt, boolean releaserHeld, AcquireReply grant, Throwable failure) {
    CompletableFuture<Void> handOff = handOffRound;
    try {
      boolean wokenMeanwhile = phase.getAndSet(IN_FLIGHT) == HANDED_OFF_WOKEN;
      if (failure != null) {
        unanswered = true;
        if (result.isDone()) {
          client.track(client.giveBackUnanswered(ops, name, owner)); // finish() may have run before
        } else {
          // the release carrying the hand-off got no answer: an outage, handled as a failed round of this
          // acquisition's own (retried with backoff within the wait, or the end of the wait)
          onFailure(failure instanceof RuntimeException re ? re
              : new io.locksmith.BackendUnavailableException("lock '" + name + "': the hand-off got no answer",
                  failure), true);
        }
      } else if (grant != null) {
        noteReply(grant);
        client.track(onReply(sentAt, grant, null));
      } else if (result.isDone()) {
        return; // finish() cleans up after this round
      } else if (releaserHeld && registered && !wokenMeanwhile) {
        // Released plainly so that a waiter of another client gets its turn (it was woken, and the lock is
        // kept for it a moment): still registered, this waiter waits for a wake-up as before. One that
        // waited locally only asks below, is refused and so registers.
        // Its re-check stays where the claim found it: the server keeps the registration only the refusal's
        // retry time + 2 s, so a fresh retry time from now could outlive it, and a release after that would
        // wake nobody (issue 23 item 25: up to the whole re-check time late)
        long due;
        synchronized (this) {
          due = recheckDue;
        }
        long now = System.nanoTime();
        long remaining = remainingNanos();
        if (remaining <= 0) {
          result.complete(Optional.empty());
        } else if (due - now <= 0) {
          send(); // it was due: ask (and register again) now
        } else {
          nextRoundBy(due - now <= remaining ? due : now + remaining);
        }
      } else if (remainingNanos() <= 0) {
        result.complete(Optional.empty()); // the wait ran out while the hand-off was on its way
      } else {
        send();
      }
    } finally {
      handOff.complete(null);
    }
  }

  /** @param observer told of every backend reply, on the thread that delivers it; must not block */
  void observe(java.util.function.Consumer<AcquireReply> observer) {
    this.observer = observer;
  }

  /** @return the backend's latest reply, or null before the first */
  AcquireReply lastReply() {
    return lastReply;
  }

  private void noteReply(AcquireReply reply) {
    lastReply = reply;
    java.util.function.Consumer<AcquireReply> o = observer;
    if (o != null) {
      try {
        o.accept(reply);
      } catch (RuntimeException e) {
        log.warn("observing an acquire reply of '{}' failed; ignored", name, e);
      }
    }
  }

  void start() {
    result.whenComplete((lease, failure) -> finish(lease));
    begun = true;
    send();
  }

  /**
   * Starts without asking the backend: another lease of this client holds the lock, and its release will
   * hand it over ({@link #claimForHandOff}) or, if it does not, start a round here
   * ({@link #askIfOnlyLocal}). Until then this waits as after a refusal, with a backstop of at most
   * {@code backstopNanos} in case both miss.
   */
  void startLocally(long backstopNanos) {
    result.whenComplete((lease, failure) -> finish(lease));
    nextRound(Math.min(backstopNanos, remainingNanos()));
    begun = true;
  }

  /**
   * A lease of this client on the lock ended without handing it over: if this acquisition waits locally
   * only (nothing registered on the backend would wake it), it asks now.
   *
   * @return whether it was told to ask
   */
  boolean askIfOnlyLocal() {
    while (!registered) {
      int p = phase.get();
      if (p == WAITING) {
        trigger();
        return true;
      }
      if (p != IN_FLIGHT || begun) {
        return false;
      }
      // Queued locally but not started yet (issue 23 item 25): the lease it queued behind ended before it
      // waits, so this request would be lost and it would sleep until its local backstop. Remembered as a
      // wake-up: it asks as soon as it starts.
      if (phase.compareAndSet(IN_FLIGHT, IN_FLIGHT_WOKEN)) {
        return true;
      }
    }
    return false;
  }

  /**
   * The backend woke this waiter. If the acquisition already ended, the wake-up is passed on at once so
   * that the next waiter is not left to its backstop timer.
   */
  void wake() {
    woken = true;
    if (result.isDone()) {
      ops.passWakeup(name, waiterId);
      return;
    }
    trigger();
  }

  /** A wake-up or the backstop timer: start a round now, or right after the one in flight. */
  void trigger() {
    while (true) {
      if (result.isDone()) {
        return;
      }
      boolean start = false;
      synchronized (this) { // pairs with the timer assignment in onReply
        if (phase.compareAndSet(WAITING, IN_FLIGHT)) {
          cancelTimer();
          start = true;
        }
      }
      if (start) {
        send();
        return;
      }
      int p = phase.get();
      if (p == WAITING) {
        continue;
      }
      if (p == IN_FLIGHT) {
        if (phase.compareAndSet(IN_FLIGHT, IN_FLIGHT_WOKEN)) {
          return;
        }
      } else if (p == HANDED_OFF) {
        // the wake-up may be the plain release's that the hand-off turned into: remembered for handOffDone
        if (phase.compareAndSet(HANDED_OFF, HANDED_OFF_WOKEN)) {
          return;
        }
      } else {
        return;
      }
    }
  }

  /**
   * Starts a round. The round is published before the check that the acquisition is still wanted, and
   * {@link #finish} reads it after the acquisition completed: so either this check sees the completion
   * and nothing is sent, or {@code finish} sees this round and cancels the wait only after its attempt
   * was answered. (Published after the send, a completion landing in between made {@code finish}
   * cancel the previous round's registration while this attempt registered the waiter again.)
   */
  private void send() {
    CompletableFuture<Void> thisRound = new CompletableFuture<>();
    round = thisRound;
    if (result.isDone()) {
      thisRound.complete(null);
      return;
    }
    long sentAt = client.ticker().nanoTime();
    CompletionStage<AcquireReply> reply;
    try {
      reply = ops.acquire(name, owner, options.leaseTime().toMillis(), AcquireMode.NEW,
          waiterId);
    } catch (RuntimeException e) { // nothing was sent
      try {
        onFailure(e, false);
      } finally {
        thisRound.complete(null);
      }
      return;
    }
    reply.whenComplete((r, failure) -> {
      if (r != null) {
        noteReply(r); // before onReply, which may complete the result
      }
      CompletionStage<?> rest;
      try {
        rest = onReply(sentAt, r, failure);
      } catch (RuntimeException | Error e) {
        thisRound.complete(null);
        throw e;
      }
      if (rest == DONE) {
        thisRound.complete(null); // the common case, without a dependent stage
      } else {
        rest.whenComplete((v, f) -> thisRound.complete(null));
      }
    });
  }

  /** @return completes when the handling of this reply is over (a late grant's give-back included) */
  private CompletionStage<?> onReply(long sentAt, AcquireReply reply, Throwable failure) {
    if (failure != null) {
      onFailure(Futures.unwrap(failure), true);
      return DONE;
    }
    failures = 0;
    if (reply.granted() && validityLeft(sentAt) <= 0) {
      // The reply came too late (a pause, a slow network or a slow quorum): the lease may already have
      // run out on the server and the lock be someone else's. Not a grant; give back what we got, and
      // go on only once that is done, so that the release cannot overtake this owner's next attempt.
      log.warn("lock '{}' was granted with no validity left (lease {}, drift and scheduling allowance {}); "
          + "giving it back", name, options.leaseTime(), client.options().validityMarginFor(options.leaseTime()));
      AcquireReply refusal = AcquireReply.busy(
          ThreadLocalRandom.current().nextLong(1, LATE_GRANT_RETRY_MILLIS + 1));
      return client.giveBack(ops, name, owner).handle((v, f) -> null)
          .thenCompose(v -> onReply(sentAt, refusal, null));
    }
    if (reply.granted()) {
      DefaultLease lease = client.newLease(ops, name, owner, options, reply, sentAt, holdKey);
      if (!result.complete(Optional.of(lease))) {
        client.giveBack(lease); // the caller gave up (interrupt, cancel, close) while this was in flight
      }
      return DONE;
    }
    if (waiterId != null) {
      registered = true; // the refusal registered this waiter
    }
    long remaining = remainingNanos();
    if (waiterId == null || remaining <= 0) {
      result.complete(Optional.empty());
      return DONE;
    }
    long backstop = TimeUnit.MILLISECONDS.toNanos(Math.max(1, reply.retryAfterMillis()));
    nextRound(Math.min(backstop, remaining));
    return DONE;
  }

  /**
   * An attempt failed. A waiting acquisition tries again while its wait lasts if the backend could not
   * be reached; any other failure, or one at the deadline, ends it.
   *
   * @param sent whether the attempt may have reached the backend (it failed after it was sent)
   */
  private void onFailure(RuntimeException failure, boolean sent) {
    if (sent) {
      unanswered = true;
    }
    if (result.isDone()) {
      return; // given up meanwhile (interrupt, cancel, close): finish() cleans up after this round
    }
    if (waiterId == null || !(failure instanceof BackendUnavailableException)) {
      result.completeExceptionally(failure); // no wait (fail fast), or not an outage: not worth retrying
      return;
    }
    long remaining = remainingNanos();
    if (remaining <= 0) {
      // names the lock once: the last failure's own mention is dropped here (its full text stays in the cause)
      result.completeExceptionally(new BackendUnavailableException("lock '" + name + "' was not acquired within "
          + readable(Duration.ofNanos(waitNanos)) + ": the backend could not be reached (" + (failures + 1) + " attempt"
          + (failures == 0 ? "" : "s") + "; the last: " + withoutName(failure.getMessage()) + ")", failure));
      return;
    }
    failures++;
    long delay = Math.min(retryDelayNanos(failures), remaining);
    if (failures == 1) {
      log.debug("acquiring lock '{}': attempt failed ({}); trying again within the wait", name, failure.toString());
    }
    nextRound(delay);
  }

  /**
   * Waits {@code delayNanos} (or for a wake-up) before the next round; if a wake-up arrived while the
   * round was in flight, starts it at once.
   */
  private void nextRound(long delayNanos) {
    nextRoundBy(System.nanoTime() + delayNanos);
  }

  /** {@link #nextRound}, due at {@code dueNanos} ({@link System#nanoTime()}). */
  private void nextRoundBy(long dueNanos) {
    boolean waiting = false;
    synchronized (this) { // a wake-up cannot slip between the phase change and the timer it must cancel
      if (phase.compareAndSet(IN_FLIGHT, WAITING)) {
        recheckDue = dueNanos;
        timer = client.schedule(this::trigger, Math.max(0, dueNanos - System.nanoTime()));
        waiting = true;
      }
    }
    if (waiting) {
      if (result.isDone()) {
        cancelTimer();
      }
    } else {
      phase.set(IN_FLIGHT); // woken while in flight: the lock may be free now
      send();
    }
  }

  /** @return when the re-check timer armed last fires ({@link System#nanoTime()}), for tests */
  synchronized long recheckDueNanos() {
    return recheckDue;
  }

  private long remainingNanos() {
    return unbounded ? Long.MAX_VALUE : deadline - System.nanoTime();
  }

  /**
   * Delay before the next try after {@code failures} failed tries in a row: capped exponential backoff
   * with "equal jitter" (a random point in the upper half of the step), so that the waiters of a client
   * that lost its server do not all retry in step, and a backend that fails at once is not spun on.
   */
  static long retryDelayNanos(int failures) {
    long step = Math.min(RETRY_CAP_MILLIS, RETRY_BASE_MILLIS << Math.min(Math.max(failures, 1) - 1, 16));
    long millis = step - ThreadLocalRandom.current().nextLong(step / 2 + 1);
    return TimeUnit.MILLISECONDS.toNanos(millis);
  }

  /** Validity of a grant whose request was sent at {@code sentAt}: lease − elapsed − drift. */
  private long validityLeft(long sentAt) {
    return validNanos - (client.ticker().nanoTime() - sentAt);
  }

  private synchronized void cancelTimer() {
    ScheduledFuture<?> t = timer;
    if (t != null) {
      t.cancel(false);
    }
  }

  private void finish(Optional<DefaultLease> lease) {
    cancelTimer();
    client.acquisitionDone(this);
    if (waiterId != null) {
      client.waiterDone(waiterId);
    }
    if (lease != null && lease.isPresent()) {
      return;
    }
    // After the round in flight, if any: sent earlier, the cancellation could reach the server before
    // that round's attempt, which would then register this waiter again; and only then is it known
    // whether an attempt went unanswered.
    CompletableFuture<Void> cleanup = round.thenCompose(v -> {
      if (waiterId != null) {
        try {
          ops.cancelWait(name, waiterId);
          if (woken) {
            ops.passWakeup(name, waiterId); // a wake-up may have been meant for us: hand it on
          }
        } catch (RuntimeException e) {
          log.debug("could not cancel the wait for lock '{}': {}", name, e.toString());
        }
      }
      // An unanswered attempt may have been applied, or may yet be (a hung server runs it when it
      // resumes): release this owner once the backend answers. The id is this acquisition's alone, so
      // this frees nothing but such a grant. A borrowed (downgrade) owner id is left alone: its holds
      // are not only this acquisition's.
      return unanswered && freshOwner ? client.giveBackUnanswered(ops, name, owner) : DONE;
    });
    client.track(cleanup); // close() lets this finish while the connection is still open
  }

  /**
   * @return a failure's message without its mention of this lock, which the message wrapping it gives: the
   *     backend's summary (e.g. "3 of 5 nodes failed") stays, the name is said once
   */
  private String withoutName(String message) {
    return message == null ? "no message" : message.replace(" lock '" + name + "'", "").replace(" '" + name + "'", "");
  }

  /** @return e.g. "300 ms", "2 s", "1.5 s" rather than ISO-8601 "PT0.3S" */
  static String readable(Duration d) {
    long ms = d.toMillis();
    if (ms < 1_000) {
      return ms + " ms";
    }
    return ms % 1_000 == 0 ? ms / 1_000 + " s" : String.format(java.util.Locale.ROOT, "%.3f s", ms / 1e3)
        .replaceAll("0+ s$", " s");
  }
}
