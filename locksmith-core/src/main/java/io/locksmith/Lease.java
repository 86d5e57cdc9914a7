package io.locksmith;

import java.time.Duration;
import java.util.concurrent.CompletionStage;

/**
 * Ownership of a distributed lock, as handed out by {@link DistributedLock#acquire()} and its
 * siblings. The lease <em>is</em> the ownership: it is not bound to the thread that acquired it and may
 * be checked, passed on and released from any thread, which makes it the right view for asynchronous
 * code, thread pools and virtual threads.
 *
 * <p><b>Fencing.</b> {@link #fencingToken()} grows strictly across successive grants of the same lock
 * name (how strongly is stated by {@link Capabilities#fencing()}). Send it with every access to the
 * protected resource, starting with the first (usually the read), and have the resource admit it there
 * and reject tokens smaller than the largest it has admitted: that is the only protection against a
 * holder that was paused past its lease. A token checked only at the write still loses updates (a
 * paused holder that read before the next holder can write after that holder's read); see
 * {@link FenceGuard} and {@code docs/fencing.md}.
 *
 * <p><b>Validity.</b> {@link #remainingValidity()} is measured with the client's monotonic
 * {@link Ticker} from the moment the granting (or last renewing) request was <em>sent</em>, minus an
 * allowance for clock drift and one for the holder's own scheduling ({@link
 * ClientOptions#validityMarginFor}), so it never overstates what the server grants and the holder's
 * listeners hear of the loss before the server can grant the lock to someone else.
 *
 * <p><b>Ending a lease.</b> {@link #release()} (and {@code Lock.unlock()} in the Lock view) is the
 * explicit call: it reports what happened, {@code false} for a lease found lost and
 * {@link BackendUnavailableException} when the release could not reach the backend. {@link #close()}
 * is the implicit one, run by try-with-resources after the body: it never turns the body's finished
 * work into an exception, so a lost lease or a failed release is logged at WARN and the server lets
 * the lock expire with its lease. Call {@code release()} before the end of the block where the
 * outcome matters. {@link #releaseAsync()} is {@code release()} for asynchronous code.
 *
 * <p><b>Dropped leases.</b> A lease-view lease that becomes unreachable while still held (neither
 * released nor closed) is found by the client after garbage collection, logged at WARN with the stack
 * of the call that acquired it, and released; see {@link ClientOptions.Builder#leakDetection}. Do not
 * rely on this: the lock stays held, and renewed, until the collector runs.
 *
 * <p><b>Thread-safety.</b> All methods are thread-safe. {@link #release()}, {@link #releaseAsync()},
 * {@link #releaseAfter(Duration)} and {@link #close()} are idempotent: once one has ended the lease, the
 * others do nothing (and those that answer return {@code false}).
 */
public interface Lease extends AutoCloseable {

  /**
   * The fencing token of a {@linkplain #isDegraded() degraded} lease: 0, below every token a backend
   * mints (they start at 1). {@link FenceGuard} and the backend modules' fenced values refuse it with
   * {@link NoFencingTokenException}, so a lease that excludes only within its JVM cannot pass a fence.
   */
  long NO_FENCING_TOKEN = 0L;

  /** @return the name of the lock this lease holds (without the client's namespace) */
  String lockName();

  /**
   * @return the fencing token of this grant (1 or more); re-entrant acquisitions through the
   *     {@link java.util.concurrent.locks.Lock} view keep the same token. A {@linkplain #isDegraded()
   *     degraded} lease returns {@link #NO_FENCING_TOKEN}
   */
  long fencingToken();

  /**
   * Whether this lease was granted by a JVM-local lock instead of the backend, because the backend was
   * unreachable and the lock's {@link LockOptions#degradation() degradation policy} allows falling back
   * (an opt-in for efficiency locks). A degraded lease excludes only other holders in this JVM: processes
   * elsewhere may hold the same lock at the same time. Its {@link #fencingToken()} is
   * {@link #NO_FENCING_TOKEN}, which no fence accepts.
   *
   * @return {@code true} for a degraded lease; always {@code false} for a lock without a degradation
   *     policy (the default)
   */
  default boolean isDegraded() {
    return false;
  }

  /**
   * @return how many replicas confirmed the grant before it was reported, when the backend was asked
   *     to wait for them (Redis: {@code RedisLockClient.Builder#replicaAcknowledgement}); empty
   *     otherwise. Confirmation narrows, but does not close, the window in which a failover loses the
   *     grant: fence the resource all the same.
   */
  default java.util.OptionalInt replicasAcknowledged() {
    return java.util.OptionalInt.empty();
  }

  /** @return the current state; a lease whose validity has elapsed reports {@link LeaseState#LOST} */
  LeaseState state();

  /**
   * @return {@code true} while the state is {@link LeaseState#HELD}; a lease in
   *     {@link LeaseState#UNCERTAIN} is not confirmed and reports {@code false}
   */
  default boolean isHeld() {
    return state() == LeaseState.HELD;
  }

  /**
   * @return how much longer the lease is certainly valid if no renewal succeeds, never negative;
   *     {@link Duration#ZERO} once lost or released
   */
  Duration remainingValidity();

  /**
   * @return how many times the owner holds the lock: 1 for a lease view acquisition, the re-entry
   *     depth for the {@link java.util.concurrent.locks.Lock} view; 0 once lost or released
   */
  int holdCount();

  /**
   * Throws unless the lease is {@link LeaseState#HELD}. Call it right before an action that must not
   * run without the lock — and still fence the action, since a pause can happen right after the check.
   *
   * @return this lease
   * @throws LeaseLostException if the lease is {@link LeaseState#LOST}, {@link LeaseState#RELEASED} or
   *     {@link LeaseState#UNCERTAIN}
   */
  Lease checkHeld();

  /**
   * Releases the lock, whatever the hold count. Never deletes a lock someone else holds: the backend
   * checks ownership atomically. Renewal stops before the release is sent.
   *
   * @return {@code true} if this lease still held the lock up to this release; {@code false} if it had
   *     been lost (its work may have overlapped with another holder) or was already released
   * @throws BackendUnavailableException if the backend could not be reached; the lease is then
   *     considered released locally and the server lets the lock expire with its lease time
   */
  boolean release();

  /**
   * Asynchronous {@link #release()}: stops renewal and sends the release without blocking, so that
   * asynchronous code never blocks inside a stage to end its lease.
   *
   * @return completes with what {@link #release()} returns ({@code true} if this lease held the lock up
   *     to the release, {@code false} if it had been lost or was released already), or exceptionally
   *     with {@link BackendUnavailableException} if the backend could not be reached (the lease is then
   *     released locally and the server lets the lock expire). Completes on the client's completion
   *     executor, like {@link LeaseSource#acquireAsync}; cancelling it does not stop the release.
   */
  CompletionStage<Boolean> releaseAsync();

  /**
   * Gives this lease up now but leaves the lock taken for {@code delay} more, for work that must not run
   * again within a minimum interval (ShedLock's {@code lockAtLeastFor}): the backend's lease is set to
   * run out {@code delay} from now, renewal stops, and this client releases the lock when {@code delay}
   * has passed (waking a waiter). The lease is {@link LeaseState#RELEASED} on return (its holder is done),
   * or {@link LeaseState#LOST} if the backend no longer had it (then {@code false}).
   *
   * <p>The lock stays taken for {@code delay} even if this client is closed or its process ends first, on
   * every backend whose leases run out on the server (Redis, Redlock, JDBC lease rows, the in-JVM server):
   * {@code close()} leaves such a lock to its backend lease. A ZooKeeper session and the connection that
   * holds a JDBC session lock (row lock, PostgreSQL advisory lock) end with their client, and free the lock
   * then; see each backend's guide.
   *
   * <p>A waiter of another client is granted the lock when the delay has passed: woken by this client's
   * release, or, if this client is gone, when its own backstop timer finds the backend lease run out.
   *
   * @param delay how long the lock stays taken from this call, at most {@link LockOptions#MAX_LEASE_TIME};
   *     zero or negative (or under a millisecond) releases now, as {@link #release()} does
   * @return {@code true} if this lease still held the lock and the lock is now taken for {@code delay};
   *     {@code false} if it had been lost or was released already
   * @throws NullPointerException if {@code delay} is null
   * @throws IllegalArgumentException if {@code delay} is longer than {@link LockOptions#MAX_LEASE_TIME}
   * @throws BackendUnavailableException if the backend could not be reached or could not say whether it
   *     set the new lease end; the lease is then released locally and the server lets the lock expire
   *     with the lease it had, which may end before {@code delay}
   */
  boolean releaseAfter(Duration delay);

  /**
   * Releases for try-with-resources, without throwing: once the body is done, an exception here would
   * turn finished work into a failure that the caller cannot undo, so this only logs. Does nothing after
   * {@link #release()}. A lease found lost is logged at WARN (work done under it may have overlapped with
   * another holder; only fencing protects against that). A release that fails — the backend cannot be
   * reached, or it answered with an error — is logged at WARN too: the lease is released locally and the
   * server lets the lock expire with its lease, as it would after a crash. Call {@link #release()} where
   * the outcome must be handled.
   */
  @Override
  void close();

  /**
   * Adds a listener for state changes from now on.
   *
   * @param listener called on the client's event thread
   * @return this lease
   * @throws NullPointerException if {@code listener} is null
   */
  Lease addListener(LeaseListener listener);

  /**
   * Runs {@code action} once when the lease becomes {@link LeaseState#LOST} — at once (on the event
   * thread) if it already is.
   *
   * @param action called on the client's event thread
   * @return this lease
   * @throws NullPointerException if {@code action} is null
   */
  Lease onLost(Runnable action);
}
