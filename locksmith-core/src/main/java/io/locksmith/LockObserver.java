package io.locksmith;

import java.time.Duration;

/**
 * Told what a lock client does, for metrics: every acquisition's outcome and every lease state change.
 * Registered with {@link ClientOptions.Builder#observer(LockObserver)}; a client without one does no extra
 * work. The {@code locksmith-micrometer} module implements it.
 *
 * <p>Implementations must be thread-safe and quick: they are called on the threads that complete
 * acquisitions and change lease states (callers' threads, the client's scheduler, I/O threads), and must
 * not block. The state changes of one lease are reported in the order the lease took them (a change made
 * while another thread is reporting an earlier one is reported by that thread, after it). An exception thrown here is logged and otherwise ignored.
 */
public interface LockObserver {

  /** How an acquisition ended. */
  enum Outcome {
    /** A lease was granted. */
    GRANTED,
    /** The wait ran out (or a try-once attempt found the lock held). */
    TIMEOUT,
    /** It failed: the backend was unreachable, it was interrupted or cancelled, or the client closed. */
    FAILED
  }

  /**
   * An acquisition ended. Re-entries of a hold the thread already has are not acquisitions and are not
   * reported.
   *
   * @param lockName the lock's name, without the client's namespace
   * @param kind {@code exclusive}, {@code fair}, {@code read}, {@code write} or {@code semaphore}
   * @param outcome how it ended
   * @param elapsed from the start of the acquisition to its end (the time spent waiting, for a grant)
   * @param lease the lease for {@link Outcome#GRANTED}, else null
   */
  default void acquireCompleted(String lockName, String kind, Outcome outcome, Duration elapsed, Lease lease) {}

  /**
   * A lease changed state ({@code HELD}, {@code UNCERTAIN}, {@code LOST}, {@code RELEASED}).
   *
   * @param lease the lease, the same object {@link #acquireCompleted} was given
   * @param from the state before
   * @param to the state now
   */
  default void leaseStateChanged(Lease lease, LeaseState from, LeaseState to) {}

  /**
   * A lock with a {@link DegradationPolicy} was granted by its JVM-local fallback because the backend
   * could not be reached: the lease is {@linkplain Lease#isDegraded() degraded} and carries no fencing
   * token. Reported besides the failed backend attempts, which {@link #acquireCompleted} reports as
   * {@link Outcome#FAILED}. Called once per degraded grant, before the caller gets the lease.
   *
   * @param lockName the lock's name, without the client's namespace
   * @param cause the backend's failure that made the lock degrade
   */
  default void degradedGrant(String lockName, BackendUnavailableException cause) {}
}
