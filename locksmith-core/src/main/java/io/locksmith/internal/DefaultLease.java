package io.locksmith.internal;

import io.locksmith.BackendUnavailableException;
import io.locksmith.Lease;
import io.locksmith.LeaseListener;
import io.locksmith.LeaseLostException;
import io.locksmith.LeaseState;
import io.locksmith.LockException;
import io.locksmith.LockOptions;
import io.locksmith.spi.LockOps;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one lease implementation behind both lock views. State changes happen under {@code this}'s
 * monitor; the observer and listeners are told afterwards (listeners on the client's event thread), in
 * the order the state took them, so {@code LOST} is the last thing they hear.
 *
 * <p>Each lease has at most one pending timer: the next renewal or the end of validity, whichever
 * comes first, for a watched lease; the end of validity for a fixed lease, and for a watched lease
 * whose renewal is in flight (a renewal can take up to a command timeout, longer than what is left of
 * a short lease, and the loss must be reported when validity ends, not when the renewal gives up).
 * Releasing cancels it, so released leases leave nothing behind in the scheduler.
 *
 * <p>The hold count is this client's own: see {@link #onReentered} for why the server's is not used.
 */
final class DefaultLease implements Lease {
  private static final Logger log = LoggerFactory.getLogger(DefaultLease.class);
  private static final long MIN_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
  /** {@link #renewalAnswered} while no renewal is in flight: shared, completing it again changes nothing. */
  private static final CompletableFuture<Void> ANSWERED = CompletableFuture.completedFuture(null);

  private final DefaultLockClient client;
  /** The backend operations of this lease's lock kind. */
  final LockOps ops;
  private final String name;
  private final String owner;
  private final LockOptions options;
  private final long leaseNanos;
  /** Drift plus scheduling allowance: {@link io.locksmith.ClientOptions#validityMarginFor}. */
  private final long marginNanos;
  private final long fencingToken;
  private final int replicasAcknowledged;
  /**
   * Created with the first listener: most leases never get one, and an empty copy-on-write list is two
   * objects more on every grant (made on the backend's I/O thread). Guarded by this for creation.
   */
  private volatile List<LeaseListener> listeners;

  // guarded by this
  private LeaseState state = LeaseState.HELD;
  private boolean releasing;
  private boolean renewing;
  /** Completed when the renewal in flight is answered; a completed one while none is. */
  private CompletableFuture<Void> renewalAnswered = ANSWERED;
  /**
   * A verification was asked for while a renewal was in flight (see {@link #claimForVerification}): that
   * renewal may have been answered by a server from before the event that asked (a node that has since
   * restarted empty), so its answer does not settle the question and another round follows it.
   */
  private boolean verifyAgain;
  private long validUntil;
  private int holds;
  private ScheduledFuture<?> timer;
  /**
   * Transitions taken and not yet told, oldest first: {from, to}. See {@link #tellInOrder}. Created with
   * the first transition that finds another not yet told (rare): {@link #nextFrom} and {@link #nextTo} hold
   * the common single one.
   */
  private java.util.ArrayDeque<LeaseState[]> untold;
  /** The oldest transition not yet told, or null; guarded by this. */
  private LeaseState nextFrom;
  private LeaseState nextTo;
  /** Whether a thread is telling transitions now. */
  private boolean telling;
  /** Ticker time at which {@link #timer} is due (for tests); meaningful while a timer is armed. */
  private long timerDueAt;
  /** Bumped each time {@link #timer} is armed, so a firing timer can tell whether it is still current. */
  private long timerGeneration;
  private long renewDueAt; // System.nanoTime() of the next renewal
  /** The thread-hold entry of the Lock view, or null for a lease-view lease. */
  final DefaultLockClient.HoldKey holdKey;
  /**
   * The handle the lease-view caller holds, if any: listeners are given that object, the one the caller
   * knows. Weak, so that this lease (which the client keeps) does not keep the handle reachable, which
   * is how a dropped lease is detected.
   */
  private volatile WeakReference<Lease> publicView;
  /** Where the lease was acquired (a stack captured then), or null if not recorded. */
  private volatile Throwable acquiredAt;
  /**
   * The leak detector's registration of this lease's handle, kept reachable while the client keeps this
   * lease (see {@link LeakDetector}); null when not tracked.
   */
  private volatile LeakDetector.Tracked leakTracking;
  /** Whether the client counts this lease in its local holds of the name; guarded by this. */
  private boolean countedLocally;

  /** A fresh grant: one hold, whatever the backend counts (see {@link #onReentered}). */
  DefaultLease(DefaultLockClient client, LockOps ops, String name, String owner, LockOptions options,
      long fencingToken, int replicasAcknowledged, long sentAt, DefaultLockClient.HoldKey holdKey) {
    this.client = client;
    this.ops = ops;
    this.name = name;
    this.owner = owner;
    this.options = options;
    this.leaseNanos = options.leaseTime().toNanos();
    this.marginNanos = client.marginNanos(options.leaseTime());
    this.fencingToken = fencingToken;
    this.replicasAcknowledged = replicasAcknowledged;
    this.holds = 1;
    this.holdKey = holdKey;
    this.validUntil = sentAt + leaseNanos - marginNanos;
  }

  /** Arms the first timer; called once the lease is published to its holder. */
  synchronized void start() {
    scheduleNext();
  }

  String owner() {
    return owner;
  }

  LockOptions lockOptions() {
    return options;
  }

  /** @return whether this lease is renewed (a watched lease) */
  boolean watched() {
    return options.watched();
  }

  /** The client counted this lease among its local holds of the name. */
  synchronized void countLocally() {
    countedLocally = true;
  }

  /** @return whether the client counted this lease locally and has not taken it off yet (now taken off) */
  synchronized boolean uncountLocally() {
    boolean was = countedLocally;
    countedLocally = false;
    return was;
  }

  @Override
  public String lockName() {
    return name;
  }

  @Override
  public long fencingToken() {
    return fencingToken;
  }

  @Override
  public java.util.OptionalInt replicasAcknowledged() {
    return replicasAcknowledged < 0 ? java.util.OptionalInt.empty()
        : java.util.OptionalInt.of(replicasAcknowledged);
  }

  @Override
  public LeaseState state() {
    LeaseState s;
    synchronized (this) {
      s = state;
      if (s.isFinal() || !validityElapsed()) {
        return s;
      }
    }
    expireIfDue();
    synchronized (this) {
      return state;
    }
  }

  @Override
  public synchronized Duration remainingValidity() {
    if (state.isFinal()) {
      return Duration.ZERO;
    }
    return Duration.ofNanos(Math.max(0, validUntil - client.ticker().nanoTime()));
  }

  @Override
  public synchronized int holdCount() {
    return state.isFinal() ? 0 : holds;
  }

  @Override
  public Lease checkHeld() {
    LeaseState s = state();
    if (s != LeaseState.HELD) {
      throw new LeaseLostException(name, "state is " + s);
    }
    return this;
  }

  @Override
  public boolean release() {
    return client.releaseLease(this);
  }

  @Override
  public java.util.concurrent.CompletionStage<Boolean> releaseAsync() {
    return client.releaseLeaseForCaller(this);
  }

  @Override
  public boolean releaseAfter(Duration delay) {
    return client.releaseLeaseAfter(this, delay);
  }

  /**
   * Checks the delay of a {@link Lease#releaseAfter}, for every lease kind alike.
   *
   * @return the delay in milliseconds, rounded up (the backend must not end the lock first); 0 to release
   *     now, for a delay under a millisecond
   * @throws NullPointerException if {@code delay} is null
   * @throws IllegalArgumentException if it is longer than {@link LockOptions#MAX_LEASE_TIME}
   */
  static long releaseDelayMillis(Duration delay) {
    Objects.requireNonNull(delay, "delay");
    if (delay.compareTo(LockOptions.MAX_LEASE_TIME) > 0) {
      throw new IllegalArgumentException("delay " + delay + " is longer than the longest lease, "
          + LockOptions.MAX_LEASE_TIME);
    }
    if (delay.compareTo(Duration.ofMillis(1)) < 0) {
      return 0;
    }
    return (delay.toNanos() + 999_999) / 1_000_000;
  }

  /**
   * @return completes once the renewal or verification of this lease now in flight has been answered (at
   *     once if none is): a backend that runs calls on several connections (JDBC) could otherwise apply
   *     that renewal after a later call that shortened the lease
   */
  synchronized CompletableFuture<Void> renewalAnswered() {
    return renewalAnswered;
  }

  /**
   * Releases without throwing: by the time try-with-resources closes the lease the body's work is done,
   * and an exception would report it as failed. A failed release leaves the lease released locally (see
   * {@link DefaultLockClient#releaseLease}); the server expires the lock with its lease.
   */
  @Override
  public void close() {
    if (state() == LeaseState.RELEASED) {
      return; // closing after release() is the usual try-with-resources pattern, not a loss
    }
    boolean held;
    try {
      held = release();
    } catch (LockException e) {
      log.warn("lease on lock '{}' (token {}) was closed, but the release failed: {}; it is released here "
          + "and the server lets the lock expire within its lease of {}", name, fencingToken, e.getMessage(),
          options.leaseTime());
      return;
    }
    if (!held && state() == LeaseState.LOST) {
      log.warn("lease on lock '{}' (token {}) was lost before it was closed: work done under it may "
          + "have overlapped with another holder", name, fencingToken);
    }
  }

  @Override
  public Lease addListener(LeaseListener listener) {
    listeners().add(Objects.requireNonNull(listener, "listener"));
    return this;
  }

  private List<LeaseListener> listeners() {
    List<LeaseListener> l = listeners;
    if (l == null) {
      synchronized (this) {
        l = listeners;
        if (l == null) {
          l = new CopyOnWriteArrayList<>();
          listeners = l;
        }
      }
    }
    return l;
  }

  @Override
  public Lease onLost(Runnable action) {
    Objects.requireNonNull(action, "action");
    boolean[] fired = new boolean[1];
    LeaseListener l = (lease, from, to) -> {
      if (to == LeaseState.LOST && !fired[0]) {
        fired[0] = true;
        action.run();
      }
    };
    listeners().add(l);
    if (state() == LeaseState.LOST) {
      client.fire(() -> l.stateChanged(view(), LeaseState.LOST, LeaseState.LOST));
    }
    return this;
  }

  @Override
  public String toString() {
    return "Lease[" + name + ", token=" + fencingToken + ", " + state() + ", holds=" + holdCount() + "]";
  }

  // ------------------------------------------------------------------ leak detection

  /**
   * This lease was handed to a lease-view caller as {@code handle}, which gives it listeners: they are to
   * be given the handle. Recorded by the handle when a listener is added, not for every lease.
   */
  void publishedAs(Lease handle) {
    if (publicView == null) {
      publicView = new WeakReference<>(handle);
    }
  }

  /** Keeps the leak detector's registration of this lease's handle reachable: see {@link LeakDetector}. */
  void keepTracking(LeakDetector.Tracked registration) {
    leakTracking = registration;
  }

  /** The client no longer keeps this lease: nothing to detect any more (a no-op if not tracked). */
  void endTracking() {
    LeakDetector.Tracked t = leakTracking;
    if (t != null) {
      t.dismiss();
    }
  }

  /** @return the object the caller holds: the handle while it is reachable, else this lease */
  private Lease view() {
    WeakReference<Lease> ref = publicView;
    Lease handle = ref == null ? null : ref.get();
    return handle != null ? handle : this;
  }

  void acquiredAt(Throwable site) {
    this.acquiredAt = site;
  }

  /** @return where this lease was acquired, or null if that was not recorded */
  Throwable acquiredAt() {
    return acquiredAt;
  }

  /** @return whether the state is final ({@code LOST} or {@code RELEASED}), without checking validity first */
  synchronized boolean hasEnded() {
    return state.isFinal();
  }

  /** @return whether the state is {@link LeaseState#LOST}, without checking validity first */
  synchronized boolean isLost() {
    return state == LeaseState.LOST;
  }

  /**
   * @return whether this is a Lock-view hold whose thread has ended: no thread can unlock it any more
   */
  boolean orphaned() {
    return holdKey != null && !holdKey.thread().isAlive();
  }

  // ------------------------------------------------------------------ transitions

  private boolean validityElapsed() {
    return client.ticker().nanoTime() - validUntil >= 0;
  }

  /**
   * Moves to {@code to} if not final; tells the signals, the observer and the listeners outside the
   * monitor, in the order the state took its transitions (see {@link #tellInOrder}).
   *
   * @return whether the state changed
   */
  private boolean transition(LeaseState to, String why) {
    LeaseState from;
    synchronized (this) {
      from = state;
      if (from.isFinal() || from == to) {
        return false;
      }
      state = to;
      if (to.isFinal()) {
        cancelTimer();
      }
      if (nextTo == null) {
        nextFrom = from;
        nextTo = to;
      } else {
        if (untold == null) {
          untold = new java.util.ArrayDeque<>(2);
        }
        untold.add(new LeaseState[] {from, to});
      }
    }
    if (to == LeaseState.LOST) {
      log.warn("lease on lock '{}' (token {}) is lost: {}", name, fencingToken, why);
      client.leaseEnded(this);
    } else if (log.isDebugEnabled()) { // not boxing the token and building varargs on every release
      // one WARN per episode for UNCERTAIN comes from LeaseSignals, with the count of leases affected
      log.debug("lease on lock '{}' (token {}): {} -> {} ({})", name, fencingToken, from, to, why);
    }
    tellInOrder();
    return true;
  }

  /**
   * Tells every transition not told yet, oldest first: to the client's signals (the count of uncertain
   * leases, the observer) and to the listeners (queued on the event thread, which runs them in the order
   * queued). One thread tells at a time; a thread that finds another telling leaves its transition to that
   * one, which takes it before it returns.
   *
   * <p>Why: the state is set under the monitor but told outside it (the observer and the uncertainty log
   * are not to run under a lease's lock). Told by each thread for itself, two transitions on two threads
   * could be told in the opposite order: a listener heard {@code [UNCERTAIN, LOST, HELD]} while the lease
   * was {@code LOST}, and the count of uncertain leases kept a lease that was {@code HELD} again.
   */
  private void tellInOrder() {
    while (true) {
      LeaseState from;
      LeaseState to;
      synchronized (this) {
        if (telling || nextTo == null) {
          return;
        }
        from = nextFrom;
        to = nextTo;
        LeaseState[] after = untold == null ? null : untold.poll();
        nextFrom = after == null ? null : after[0];
        nextTo = after == null ? null : after[1];
        telling = true;
      }
      try {
        client.signals().stateChanged(this, from, to);
        notifyListeners(from, to);
      } catch (RuntimeException e) {
        log.warn("telling a state change of lease on lock '{}' failed", name, e);
      } finally {
        synchronized (this) {
          telling = false;
        }
      }
    }
  }

  private void notifyListeners(LeaseState from, LeaseState to) {
    List<LeaseListener> all = listeners;
    if (all == null) {
      return;
    }
    for (LeaseListener l : all) {
      client.fire(() -> l.stateChanged(view(), from, to));
    }
  }

  /** Validity ran out: a watched lease without a successful renewal, a fixed one at its end. */
  void expireIfDue() {
    boolean due;
    synchronized (this) {
      due = !state.isFinal() && validityElapsed();
    }
    if (due) {
      transition(LeaseState.LOST, options.watched() ? "validity elapsed without a successful renewal"
          : "its fixed lease time ran out (a fixed lease is never renewed)");
    }
  }

  /** The backend reported the owner gone (renewal refused, re-entry/unlock found it gone, a notice). */
  void markLost(String why) {
    transition(LeaseState.LOST, why);
  }

  /**
   * The connection to the backend dropped: a {@link LeaseState#HELD} lease may be gone without anyone
   * being able to say so. Only a renewal's answer makes it {@code HELD} again. A lease being released is
   * left alone: its release decides.
   *
   * @return whether it became {@link LeaseState#UNCERTAIN} now
   */
  boolean markUncertain(String why) {
    synchronized (this) {
      if (state != LeaseState.HELD || releasing) {
        return false;
      }
    }
    return transition(LeaseState.UNCERTAIN, why);
  }

  // ------------------------------------------------------------------ timers and renewal

  /**
   * @return the ticker time at which the lease's one timer is due (its next renewal or the end of its
   *     validity), or empty if none is armed (for tests)
   */
  synchronized java.util.OptionalLong timerDueAt() {
    return timer == null ? java.util.OptionalLong.empty() : java.util.OptionalLong.of(timerDueAt);
  }

  /** Guarded by this. */
  private void cancelTimer() {
    if (timer != null) {
      timer.cancel(false);
      timer = null;
    }
  }

  /**
   * Guarded by this: arm the one timer for what comes next. While a renewal is in flight that is the end
   * of validity alone; the renewal's reply arms the next renewal.
   */
  private void scheduleNext() {
    cancelTimer();
    if (state.isFinal() || releasing) {
      return;
    }
    long now = client.ticker().nanoTime();
    long untilInvalid = validUntil - now;
    long delay = untilInvalid;
    if (options.watched() && !renewing) {
      long untilRenewal = renewDueAt == 0 ? leaseNanos / 3 : renewDueAt - System.nanoTime();
      delay = Math.min(untilInvalid, untilRenewal);
      renewDueAt = System.nanoTime() + Math.max(0, delay);
    }
    long generation = ++timerGeneration;
    timerDueAt = now + delay;
    timer = client.schedule(() -> onTimer(generation), delay);
  }

  private void onTimer(long generation) {
    expireIfDue();
    if (options.watched()) {
      client.renewer().renewDue(this);
    }
    synchronized (this) {
      // Nothing armed a new timer: the renewal was not claimed (one is in flight already, or it is not
      // due), or validity was moved on (a re-entry) or has not ended on the injected ticker yet. Without
      // this the lease would have no timer left until some reply happened to arm one.
      if (generation == timerGeneration) {
        timer = null;
        scheduleNext();
      }
    }
  }

  /**
   * Called by the renewer with its dispatch lock held: claim this lease for a renewal batch.
   *
   * @param now System.nanoTime()
   * @return whether the lease should be renewed now: it is due within a ninth of its lease
   */
  synchronized boolean claimForRenewal(long now) {
    if (state.isFinal() || releasing || renewing || !options.watched()) {
      return false;
    }
    if (renewDueAt - now > leaseNanos / 9) {
      return false;
    }
    renewing = true;
    renewalAnswered = new CompletableFuture<>();
    scheduleNext(); // now only the end of validity: listeners must not wait for the renewal's reply
    return true;
  }

  /**
   * Called by the renewer with its dispatch lock held: claim this lease for a verification round, due or
   * not (the connection came back, or a notice concerned its owner). A watched lease is renewed as usual;
   * a fixed lease is asked to last only what its validity has left, so that it is confirmed without being
   * extended (the server then keeps it at least as long as this lease believes it holds it: that time is
   * measured from before the request went out, the server's from when it arrived).
   *
   * @return the lease time to send in ms, or -1 if the lease is not to be verified now (final, being
   *     released, a fixed lease about to end, or a renewal already in flight: then the verification is
   *     sent once that renewal's reply is in, see {@link #takeVerifyAgain})
   */
  synchronized long claimForVerification() {
    if (state.isFinal() || releasing) {
      return -1;
    }
    if (renewing) {
      verifyAgain = true; // the renewer sends it when the reply in flight is in (takeVerifyAgain)
      return -1;
    }
    long millis = options.leaseTime().toMillis();
    if (!options.watched()) {
      long left = validUntil - client.ticker().nanoTime();
      if (left < TimeUnit.MILLISECONDS.toNanos(1)) {
        return -1; // ends within the millisecond; its timer reports that
      }
      millis = (left + 999_999) / 1_000_000; // rounded up: the server must not end it first
    }
    renewing = true;
    renewalAnswered = new CompletableFuture<>();
    scheduleNext(); // now only the end of validity, as for a renewal
    return millis;
  }

  /**
   * Called by the renewer once a renewal's reply has been applied: whether a verification was asked for
   * while it was in flight and is still to be sent (the flag is cleared).
   */
  synchronized boolean takeVerifyAgain() {
    boolean again = verifyAgain && !state.isFinal() && !releasing;
    verifyAgain = false;
    return again;
  }

  /**
   * @param now System.nanoTime()
   * @return whether {@link #claimForRenewal} would claim this lease now (the same test, without claiming)
   */
  synchronized boolean dueForRenewal(long now) {
    return !state.isFinal() && !releasing && !renewing && options.watched()
        && renewDueAt - now <= leaseNanos / 9;
  }

  /**
   * A renewal (or verification) sent at {@code sentAt} (ticker time) came back.
   *
   * @return whether this reply made the lease {@link LeaseState#UNCERTAIN}
   */
  boolean onRenewalReply(long sentAt, boolean stillOwned, Throwable failure) {
    if (failure == null && !stillOwned) {
      synchronized (this) {
        renewing = false;
        renewalAnswered.complete(null);
      }
      markLost("the backend no longer has this owner's lock (expired, deleted or taken over)");
      return false;
    }
    LeaseState to;
    synchronized (this) {
      renewing = false;
      renewalAnswered.complete(null);
      if (state.isFinal() || releasing) {
        return false;
      }
      long now = System.nanoTime();
      if (failure == null && !options.watched()) {
        // a fixed lease's verification (claimForVerification): confirmed, not extended
        to = LeaseState.HELD;
      } else if (failure == null) {
        validUntil = Math.max(validUntil, sentAt + leaseNanos - marginNanos);
        // a third of the lease after the request went out, not after the reply: a slow reply (say, a
        // batch that waited for another server) must not push every later renewal back
        long sinceSent = client.ticker().nanoTime() - sentAt;
        renewDueAt = now + Math.max(MIN_RETRY_NANOS, leaseNanos / 3 - sinceSent);
        to = LeaseState.HELD;
      } else {
        long untilInvalid = validUntil - client.ticker().nanoTime();
        // retry well before the validity runs out, but without hammering a sick server
        renewDueAt = now + Math.max(MIN_RETRY_NANOS, Math.min(leaseNanos / 6, untilInvalid / 3));
        to = LeaseState.UNCERTAIN;
      }
      scheduleNext();
    }
    boolean changed;
    if (failure != null) {
      log.debug("renewal of lock '{}' failed: {}", name, failure.toString());
      changed = transition(to, "renewal failed: " + failure.getMessage());
    } else {
      changed = transition(to, options.watched() ? "renewed" : "verified");
    }
    expireIfDue();
    return changed && to == LeaseState.UNCERTAIN;
  }

  // ------------------------------------------------------------------ release and re-entry

  /**
   * Stops renewal before a release is sent: the renewer's dispatch lock is held by the caller, so no
   * renewal can be dispatched after this returns.
   *
   * @return the state before, or null if already releasing or final
   */
  synchronized LeaseState beginRelease() {
    if (releasing || state.isFinal()) {
      return state.isFinal() ? state : null;
    }
    releasing = true;
    cancelTimer();
    return state;
  }

  /** The release reached the backend: {@code ownedUntilRelease} says whether it was still ours. */
  void finishRelease(boolean ownedUntilRelease) {
    if (ownedUntilRelease) {
      transition(LeaseState.RELEASED, "released");
    } else {
      transition(LeaseState.LOST, "found lost at release");
    }
  }

  /** The release could not reach the backend; the server expires the lock by itself. */
  void abandon() {
    transition(LeaseState.RELEASED, "released locally; backend unreachable");
  }

  /**
   * A re-entry sent at {@code sentAt} was granted: one more hold, validity restarted.
   *
   * <p>Why the count is kept here and not taken from the server: the Lock view's count must follow the
   * thread's own {@code lock()}/{@code unlock()} calls, and the server's count drifts from them whenever
   * a call fails without the thread knowing whether it was applied — a re-entry that timed out after the
   * server counted it, a partial unlock that never reached the server — and Redlock can only report one
   * node's count (the highest) for a lease held on several. Adopting such a count made a thread's
   * three {@code lock()} and three {@code unlock()} leave the lock held for the life of the client. So a
   * re-entry adds one here, a partial unlock takes one away whatever happened to it, and the last
   * {@code unlock()} releases <em>every</em> hold on the server; the server's count may then run ahead of
   * this one, harmlessly, and its replies serve only to tell whether the lock is still ours. (Making
   * re-entry and partial unlock idempotent with an expected count in the SPI would have kept the two
   * counts equal, at the cost of changing every backend's scripts, without changing what a thread sees.)
   */
  synchronized void onReentered(long sentAt) {
    holds++;
    validUntil = Math.max(validUntil, sentAt + leaseNanos - marginNanos);
    scheduleNext();
  }

  /** @return the Lock view's hold count, also once final (unlike {@link #holdCount()}) */
  synchronized int localHolds() {
    return holds;
  }

  /** One hold of a thread that holds more than one was given up, whatever the server made of it. */
  synchronized void dropHold() {
    holds = Math.max(1, holds - 1);
  }

  /** Locally drops one hold of a lease already lost; @return the holds left. */
  synchronized int dropLocalHold() {
    holds = Math.max(0, holds - 1);
    return holds;
  }
}
