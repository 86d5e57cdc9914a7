package io.locksmith;

import java.time.Duration;

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
 * allowance for clock drift, so it never overstates what the server grants.
 *
 * <p><b>Thread-safety.</b> All methods are thread-safe. {@link #release()} and {@link #close()} are
 * idempotent.
 */
public interface Lease extends AutoCloseable {

  /** @return the name of the lock this lease holds (without the client's namespace) */
  String lockName();

  /**
   * @return the fencing token of this grant; re-entrant acquisitions through the
   *     {@link java.util.concurrent.locks.Lock} view keep the same token
   */
  long fencingToken();

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
   * Same as {@link #release()} for try-with-resources; a lease found lost is logged at WARN rather than
   * thrown, so check {@link #release()}'s result where that matters.
   *
   * @throws BackendUnavailableException if the backend could not be reached
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
