package io.locksmith;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * The lease view shared by every lock kind: each successful call returns a new {@link Lease}, a new
 * owner that may be released from any thread. For a lock it is the lock; for a
 * {@link DistributedSemaphore} it is one permit. "Held by another owner" below means, for a semaphore,
 * that no permit is free.
 *
 * <p>Waiting is by notification where the backend has it, and every wait is bounded: the last attempt
 * is sent by the end of the wait, so a blocking call returns within its wait plus the length of one
 * attempt. An attempt is one backend command on a single Redis node (one command timeout), but it can
 * be longer: a Redlock attempt that gives back a split vote, or raises the token on lagging nodes and
 * then gives back, takes up to three node timeouts; replica acknowledgement adds its {@code WAIT} and,
 * when too few replicas confirm, a give-back; and a grant that arrives with no validity left is given
 * back (one more command) before the call goes on. {@code docs/architecture.md} gives the bound per
 * backend.
 *
 * <p><b>Outages.</b> A call that does not wait ({@link #tryAcquire()}, a zero wait) tries once and
 * fails with {@link BackendUnavailableException} if the backend cannot be reached or does not answer
 * within its command timeout. A call that waits keeps trying across reconnects and command timeouts
 * (after 25 ms, then doubling up to 1 s between attempts, with jitter; never past its deadline) until
 * its wait runs out. If its last attempt failed too, it throws {@code BackendUnavailableException}
 * naming the wait, with that failure as the cause: an outage is reported as an outage, never as
 * {@link AcquireTimeoutException} or an empty result, because nobody knows whether the lock was free.
 * {@link #acquire()} waits through any outage. Only {@code BackendUnavailableException} is retried;
 * any other failure ends the call at once. An attempt that timed out may still take effect on the
 * server (a hung server runs it when it resumes); the acquisition's next attempt then adopts that
 * grant, and if the call ends without a lease the client gives it back as soon as the server answers
 * again. Nothing is granted that the backend did not grant. A wait too long to count in nanoseconds in a {@code long} (about 292 years, e.g.
 * {@code ChronoUnit.FOREVER.getDuration()}) waits without bound, like {@link #acquire()}. Instances are
 * thread-safe.
 */
public interface LeaseSource {

  /** @return the name, as given to the {@link LockClient} */
  String name();

  /** @return the lease policy of this lock */
  LockOptions options();

  /**
   * Waits as long as it takes for the lock and returns the lease.
   *
   * @return the lease, {@link LeaseState#HELD}
   * @throws InterruptedException if the thread was interrupted on entry (then nothing is sent) or is
   *     interrupted while waiting; nothing is then held, and the interrupt status is cleared
   * @throws LockException if the backend fails in a way that is not an outage (an error reply); an
   *     unreachable backend is waited for, not reported
   * @throws IllegalStateException if the client is closed
   */
  Lease acquire() throws InterruptedException;

  /**
   * Waits at most {@code wait} for the lock.
   *
   * @param wait how long to wait; {@link Duration#ZERO} tries once
   * @return the lease, {@link LeaseState#HELD}
   * @throws AcquireTimeoutException if another owner held the lock for the whole wait
   * @throws InterruptedException if the thread was interrupted on entry (then nothing is sent) or is
   *     interrupted while waiting; nothing is then held, and the interrupt status is cleared
   * @throws BackendUnavailableException if the wait ran out while the backend could not be reached
   *     (its last attempt failed; the cause is that failure), or at once for a zero wait
   * @throws NullPointerException if {@code wait} is null
   * @throws IllegalArgumentException if {@code wait} is negative
   * @throws IllegalStateException if the client is closed
   */
  Lease acquire(Duration wait) throws InterruptedException;

  /**
   * Tries once, without waiting.
   *
   * @return the lease, or empty if another owner holds the lock
   * @throws BackendUnavailableException if the backend cannot be reached (one attempt, no retry)
   * @throws IllegalStateException if the client is closed
   */
  Optional<Lease> tryAcquire();

  /**
   * Waits at most {@code wait} for the lock; not getting it is a result, not an exception.
   *
   * @param wait how long to wait; {@link Duration#ZERO} tries once
   * @return the lease, or empty if another owner held the lock for the whole wait
   * @throws InterruptedException if the thread was interrupted on entry (then nothing is sent) or is
   *     interrupted while waiting; nothing is then held, and the interrupt status is cleared
   * @throws BackendUnavailableException if the wait ran out while the backend could not be reached
   *     (its last attempt failed; the cause is that failure): not an empty result, since whether the
   *     lock was free is unknown
   * @throws NullPointerException if {@code wait} is null
   * @throws IllegalArgumentException if {@code wait} is negative
   * @throws IllegalStateException if the client is closed
   */
  Optional<Lease> tryAcquire(Duration wait) throws InterruptedException;

  /**
   * Asynchronous {@link #acquire(Duration)}: never blocks the caller. Cancelling the returned stage's
   * {@code CompletableFuture} abandons the wait; a grant that races with the cancellation is released.
   *
   * <p>The stage completes on the client's completion executor ({@link
   * ClientOptions.Builder#completionExecutor}: a small pool the client owns unless the application gave
   * one), never on a backend I/O thread and never on the common {@code ForkJoinPool}. Dependent stages
   * added without an executor ({@code thenApply}, {@code thenAccept}, …) run there too once it
   * completes. They may make short blocking calls on the lease, but the pool is small and shared by
   * every async caller of the client: release with {@link Lease#releaseAsync()}, run long work on the
   * application's executor ({@code thenApplyAsync(fn, executor)}), and never wait inside a stage for
   * another async result of the same client.
   *
   * @param wait how long to wait
   * @return completes with the lease, or exceptionally with {@link AcquireTimeoutException},
   *     {@link BackendUnavailableException} (the wait ran out during an outage) or
   *     {@link IllegalStateException} (client closed)
   * @throws NullPointerException if {@code wait} is null
   * @throws IllegalArgumentException if {@code wait} is negative
   */
  CompletionStage<Lease> acquireAsync(Duration wait);

  /**
   * Asynchronous {@link #tryAcquire(Duration)}, with the same cancellation and threading rules as
   * {@link #acquireAsync(Duration)}.
   *
   * @param wait how long to wait
   * @return completes with the lease or empty, or exceptionally with
   *     {@link BackendUnavailableException} or {@link IllegalStateException} (client closed)
   * @throws NullPointerException if {@code wait} is null
   * @throws IllegalArgumentException if {@code wait} is negative
   */
  CompletionStage<Optional<Lease>> tryAcquireAsync(Duration wait);

  /**
   * Runs {@code task} while holding the lock: waits at most {@code wait} for it, runs the task on the
   * calling thread, and releases in a {@code finally}. The same as {@link #callLocked} without a result.
   *
   * @param wait how long to wait for the lock; {@link Duration#ZERO} tries once
   * @param task the work to do under the lock; it may throw checked exceptions
   * @param <E> what the task may throw, passed on unchanged (inferred: a task that throws no checked
   *     exception makes this call throw none either)
   * @throws E whatever the task threw, unchanged; the lock is released all the same
   * @throws AcquireTimeoutException if the lock was not acquired within {@code wait}; the task did not
   *     run
   * @throws AcquireInterruptedException if the thread was interrupted while waiting (its interrupt
   *     status is set again); the task did not run
   * @throws BackendUnavailableException if the backend cannot be reached to acquire; the task did not
   *     run
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code wait} is negative
   * @throws IllegalStateException if the client is closed
   * @see #callLocked(Duration, LockedCallable)
   */
  default <E extends Exception> void runLocked(Duration wait, LockedRunnable<E> task) throws E {
    Objects.requireNonNull(task, "task");
    callLocked(wait, () -> {
      task.run();
      return null;
    });
  }

  /**
   * Calls {@code task} while holding the lock and returns its result: waits at most {@code wait} for
   * the lock, calls the task on the calling thread, and releases in a {@code finally}.
   *
   * <p>The task's own exceptions, checked or not, pass through unchanged and are not wrapped: {@code E}
   * is inferred from the task, so a task that throws no checked exception needs no {@code try}/{@code
   * catch} around this call, and one that throws {@code IOException} makes this call throw it. An
   * interrupt while waiting is reported unchecked ({@link AcquireInterruptedException}), so the call
   * fits where {@link InterruptedException} cannot be declared.
   *
   * <p>Releasing follows {@link Lease#close()}: once the task has returned, a release that fails (the
   * backend is unreachable) or finds the lease lost is logged at WARN and not thrown, because the work is
   * done and an exception would report committed work as failed; the server lets the lock expire with its
   * lease. Fence what the task writes: the task does not see the lease here, so when it needs the
   * fencing token use {@code try (Lease lease = acquire(wait)) { ... lease.fencingToken() ... }}.
   *
   * <p>Here, in the lease view, every call is a new owner: a task that calls {@code callLocked} on the
   * same lock again waits for itself until its wait runs out (a semaphore takes a second permit).
   * {@link DistributedLock} overrides this to hold the lock for the calling thread, re-entrantly.
   *
   * @param wait how long to wait for the lock; {@link Duration#ZERO} tries once
   * @param task the work to do under the lock
   * @param <T> the task's result type
   * @param <E> what the task may throw, passed on unchanged
   * @return what the task returned
   * @throws E whatever the task threw, unchanged; the lock is released all the same
   * @throws AcquireTimeoutException if the lock was not acquired within {@code wait}; the task did not
   *     run
   * @throws AcquireInterruptedException if the thread was interrupted while waiting (its interrupt
   *     status is set again); the task did not run
   * @throws BackendUnavailableException if the backend cannot be reached to acquire; the task did not
   *     run
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code wait} is negative
   * @throws IllegalStateException if the client is closed
   */
  default <T, E extends Exception> T callLocked(Duration wait, LockedCallable<T, E> task) throws E {
    Objects.requireNonNull(task, "task");
    Lease lease;
    try {
      lease = acquire(wait);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AcquireInterruptedException(name(), e);
    }
    try (lease) {
      return task.call();
    }
  }

  /**
   * The work of {@link #runLocked}: a {@link Runnable} that may throw a checked exception.
   *
   * @param <E> what it may throw
   */
  @FunctionalInterface
  interface LockedRunnable<E extends Exception> {
    /**
     * Does the work.
     *
     * @throws E passed on to the caller of {@code runLocked} unchanged
     */
    void run() throws E;
  }

  /**
   * The work of {@link #callLocked}: a {@link java.util.concurrent.Callable} whose exception type is a
   * parameter, so that the caller only handles what the task really throws.
   *
   * @param <T> the result type
   * @param <E> what it may throw
   */
  @FunctionalInterface
  interface LockedCallable<T, E extends Exception> {
    /**
     * Does the work.
     *
     * @return the result, passed on to the caller of {@code callLocked}
     * @throws E passed on to the caller of {@code callLocked} unchanged
     */
    T call() throws E;
  }
}
