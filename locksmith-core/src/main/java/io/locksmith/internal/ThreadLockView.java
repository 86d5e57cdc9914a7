package io.locksmith.internal;

import io.locksmith.DistributedLock;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * The {@link java.util.concurrent.locks.Lock} methods of a {@link DistributedLock}, written once over one
 * primitive: take the calling thread's hold, waiting at most so long, re-entering a hold it already has.
 * An implementation supplies that primitive and {@code unlock()}.
 */
interface ThreadLockView extends DistributedLock {
  /**
   * Takes or re-enters the calling thread's hold.
   *
   * @param waitNanos how long to wait: 0 not at all, {@link Long#MAX_VALUE} without bound
   * @param interruptible whether an interrupt ends the wait (with {@link InterruptedException})
   * @return whether the thread holds the lock now
   * @throws InterruptedException if {@code interruptible} and the thread was interrupted while waiting
   */
  boolean lockForThread(long waitNanos, boolean interruptible) throws InterruptedException;

  @Override
  default void lock() {
    try {
      lockForThread(Long.MAX_VALUE, false);
    } catch (InterruptedException impossible) {
      throw new AssertionError(impossible);
    }
  }

  @Override
  default void lockInterruptibly() throws InterruptedException {
    AbstractLeaseSource.checkInterrupt();
    lockForThread(Long.MAX_VALUE, true);
  }

  @Override
  default boolean tryLock() {
    try {
      return lockForThread(0, false);
    } catch (InterruptedException impossible) {
      throw new AssertionError(impossible);
    }
  }

  @Override
  default boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
    Objects.requireNonNull(unit, "unit");
    if (time < 0) {
      throw new IllegalArgumentException("wait must not be negative, was " + time + " " + unit);
    }
    AbstractLeaseSource.checkInterrupt();
    return lockForThread(unit.toNanos(time), true);
  }
}
