package io.locksmith.spring.integration;

import java.time.Duration;
import java.util.concurrent.locks.Lock;

/**
 * A lock of {@link LocksmithLockRegistry}: a {@link Lock} owned by the thread that locks it, re-entrant
 * per thread, plus the two methods with a lease time that Spring Integration 7's {@code DistributedLock}
 * has (offered on the 6.5 line too, so that code moves between the lines unchanged). The registry's
 * Javadoc says how each method behaves and fails. Thread-safe.
 */
public interface LocksmithLock extends Lock {
  /**
   * Locks as {@link #lock()} does; a first acquisition takes a lease of {@code ttl} that is not renewed
   * automatically: it ends after {@code ttl} unless unlocked or renewed ({@link
   * LocksmithLockRegistry#renewLock(Object)}). A re-entry keeps the lease the thread already has.
   *
   * @param ttl the lease time, {@link io.locksmith.LockOptions#MIN_LEASE_TIME} to {@link
   *     io.locksmith.LockOptions#MAX_LEASE_TIME}, longer than the client's clock-drift allowance
   * @throws NullPointerException if {@code ttl} is null
   * @throws IllegalArgumentException if {@code ttl} is out of range
   */
  void lock(Duration ttl);

  /**
   * Waits at most {@code waitTime} for the lock, as {@link #tryLock(long, java.util.concurrent.TimeUnit)}
   * does; a first acquisition takes a lease of {@code ttl} as {@link #lock(Duration)} does.
   *
   * @param waitTime how long to wait; zero or negative tries once
   * @param ttl the lease time, as for {@link #lock(Duration)}
   * @return whether the calling thread now holds the lock
   * @throws InterruptedException if the thread was interrupted on entry or while waiting
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code ttl} is out of range
   */
  boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException;
}
