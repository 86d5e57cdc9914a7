package io.locksmith;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/**
 * A named exclusive lock shared by every process that uses the same backend and namespace, with two
 * views over one implementation.
 *
 * <p><b>The {@link Lock} view</b> ({@link #lock()}, {@link #tryLock()}, {@link #unlock()}, …) is owned
 * by the calling thread and re-entrant per thread: a thread that holds the lock may lock it again, the
 * hold count goes up, the fencing token stays the same, and the lock is freed when the count returns
 * to zero. {@link #unlock()} by a thread that does not hold it throws
 * {@link IllegalMonitorStateException}. Code written against {@code Lock} works unchanged.
 *
 * <p><b>The lease view</b> ({@link #acquire()}, {@link #tryAcquire(Duration)},
 * {@link #acquireAsync(Duration)}, …) returns a {@link Lease} that is the ownership itself: it may be
 * released from any thread. Every lease-view acquisition is a new owner, so a second {@code acquire}
 * waits for the first lease like any other contender — pass the lease around rather than acquiring
 * again.
 *
 * <p><b>Waiting</b> is by notification where the backend has it (no busy polling), and every wait is
 * bounded: a blocking call returns within its wait plus one acquisition attempt, which is one command
 * timeout on a single Redis node and longer for Redlock (up to three node timeouts), with replica
 * acknowledgement, or when a grant that came too late is given back; see {@link LeaseSource}.
 *
 * <p><b>Failure.</b> A call that does not wait ({@link #tryLock()}, {@link #tryAcquire()}) fails with
 * {@link BackendUnavailableException} when the backend cannot be reached. A call that waits keeps
 * trying across reconnects and command timeouts until its wait runs out, and only then fails with
 * {@code BackendUnavailableException}, the last failure as its cause; {@link #lock()} and
 * {@link #acquire()} wait through any outage (see {@link LeaseSource}). A re-entry by a thread that
 * already holds the lock is one round trip and fails at once. Nothing is granted that the backend did
 * not grant.
 *
 * <p><b>Kinds.</b> The same interface serves the exclusive lock ({@link LockClient#lock(String)}), the
 * fair lock ({@link LockClient#fairLock(String)}: granted in arrival order) and both sides of a
 * read-write lock ({@link LockClient#readWriteLock(String)}). Locks of different kinds never exclude
 * each other, even under the same name.
 *
 * <p>Instances are thread-safe and cheap; {@link LockClient#lock(String)} may be called for every use.
 */
public interface DistributedLock extends Lock, LeaseSource {

  /**
   * Reads who holds this lock, for operators.
   *
   * @return the holder (for a read lock: one of the readers, with {@link LockInfo#holdCount()} the
   *     number of read holds), or empty if free
   * @throws BackendUnavailableException if the backend cannot be reached
   * @throws IllegalStateException if the client is closed
   */
  Optional<LockInfo> inspect();

  /**
   * Deletes this lock whoever holds it, for operators clearing a lock a dead process left behind; see
   * {@link LockClient#forceUnlock(String)}. On a read-write lock, the write side removes the writer and
   * the read side removes every reader.
   *
   * @return whether a hold was deleted
   * @throws BackendUnavailableException if the backend cannot be reached
   * @throws IllegalStateException if the client is closed
   */
  boolean forceUnlock();

  /**
   * Runs {@code task} while the calling thread holds this lock; see {@link #callLocked}.
   *
   * @throws E whatever the task threw, unchanged; the lock is released all the same
   * @throws AcquireTimeoutException if the lock was not acquired within {@code wait}; the task did not
   *     run
   * @throws AcquireInterruptedException if the thread was interrupted while waiting (its interrupt
   *     status is set again); the task did not run
   * @throws BackendUnavailableException if the backend cannot be reached to acquire; the task did not
   *     run
   * @throws LeaseLostException on re-entry, if the thread's hold was lost meanwhile; the task did not run
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code wait} is negative
   * @throws IllegalStateException if the client is closed, or on the write side of a read-write lock
   *     while the thread holds the read side
   */
  @Override
  <E extends Exception> void runLocked(Duration wait, LockedRunnable<E> task) throws E;

  /**
   * Calls {@code task} while the calling thread holds this lock, through the {@link Lock} view: {@code
   * tryLock(wait)}, the task, {@code unlock()} in a {@code finally}. So it is re-entrant per thread (a
   * task that calls {@code runLocked} or {@code lock()} on the same lock again enters at once), a read
   * under the thread's write hold is a downgrade, and {@link #currentThreadLease()} gives the task the
   * lease and its fencing token. Otherwise as {@link LeaseSource#callLocked}: exceptions of the task pass
   * through unchanged, and an {@code unlock()} that fails after the task returned (backend unreachable,
   * hold lost) is logged at WARN instead of thrown, as {@link Lease#close()} does.
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
   * @throws LeaseLostException on re-entry, if the thread's hold was lost meanwhile; the task did not run
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code wait} is negative
   * @throws IllegalStateException if the client is closed, or on the write side of a read-write lock
   *     while the thread holds the read side
   */
  @Override
  <T, E extends Exception> T callLocked(Duration wait, LockedCallable<T, E> task) throws E;

  // ---------------------------------------------------------------- Lock view

  /**
   * Acquires for the calling thread, waiting as long as it takes, through outages too, ignoring
   * interrupts (the interrupt status is restored on return). Re-entrant.
   *
   * @throws BackendUnavailableException only on re-entry (the thread already holds the lock), if the
   *     backend cannot be reached; a first acquisition waits for the backend
   * @throws LeaseLostException on re-entry, if the thread's hold was lost meanwhile; on the read side
   *     of a read-write lock also on a downgrade (the thread holds the write side) whose write hold was
   *     lost (see {@link DistributedReadWriteLock})
   * @throws IllegalStateException if the client is closed
   */
  @Override
  void lock();

  /**
   * As {@link #lock()}, but interruptible.
   *
   * @throws InterruptedException if the thread was interrupted on entry (then nothing is sent) or is
   *     interrupted while waiting; nothing is then held, and the interrupt status is cleared
   * @throws BackendUnavailableException only on re-entry (the thread already holds the lock), if the
   *     backend cannot be reached; a first acquisition waits for the backend
   * @throws LeaseLostException on re-entry, if the thread's hold was lost meanwhile; on the read side
   *     of a read-write lock also on a downgrade (the thread holds the write side) whose write hold was
   *     lost (see {@link DistributedReadWriteLock})
   */
  @Override
  void lockInterruptibly() throws InterruptedException;

  /**
   * Tries once for the calling thread. Re-entrant.
   *
   * @return whether the calling thread now holds the lock
   * @throws BackendUnavailableException if the backend cannot be reached
   * @throws LeaseLostException on re-entry, if the thread's hold was lost meanwhile; on the read side
   *     of a read-write lock also on a downgrade (the thread holds the write side) whose write hold was
   *     lost (see {@link DistributedReadWriteLock})
   */
  @Override
  boolean tryLock();

  /**
   * Waits at most the given time for the calling thread. Re-entrant.
   *
   * @return whether the calling thread now holds the lock
   * @throws InterruptedException if the thread was interrupted on entry (then nothing is sent) or is
   *     interrupted while waiting; nothing is then held, and the interrupt status is cleared
   * @throws BackendUnavailableException if the wait ran out while the backend could not be reached
   *     (the cause is the last attempt's failure), or on re-entry if it cannot be reached
   * @throws LeaseLostException on re-entry, if the thread's hold was lost meanwhile; on the read side
   *     of a read-write lock also on a downgrade (the thread holds the write side) whose write hold was
   *     lost (see {@link DistributedReadWriteLock})
   * @throws IllegalArgumentException if {@code time} is negative
   */
  @Override
  boolean tryLock(long time, TimeUnit unit) throws InterruptedException;

  /**
   * Drops one hold of the calling thread; the last one releases the lock.
   *
   * @throws IllegalMonitorStateException if the calling thread does not hold the lock
   * @throws LeaseLostException if the hold had been lost before this call (the thread no longer holds
   *     the lock afterwards)
   * @throws BackendUnavailableException if the backend cannot be reached (the thread no longer holds
   *     the lock afterwards; the server lets it expire)
   */
  @Override
  void unlock();

  /** @return whether the calling thread holds the lock (its lease is held or uncertain) */
  boolean isHeldByCurrentThread();

  /** @return the calling thread's hold count, 0 if it does not hold the lock */
  int getHoldCount();

  /** @return the calling thread's lease (for its fencing token and state), if it holds the lock */
  Optional<Lease> currentThreadLease();

  /**
   * Not supported: a distributed lock has no distributed condition variables.
   *
   * @throws UnsupportedOperationException always
   */
  @Override
  default Condition newCondition() {
    throw new UnsupportedOperationException("distributed locks do not support conditions");
  }
}
