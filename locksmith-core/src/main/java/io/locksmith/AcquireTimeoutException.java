package io.locksmith;

import java.time.Duration;

/**
 * {@link DistributedLock#acquire(Duration)} gave up because the lock stayed held by another owner for
 * the whole wait. (The {@code tryAcquire} methods report the same outcome as an empty result.)
 */
public class AcquireTimeoutException extends LockException {
  private static final long serialVersionUID = 1L;
  private final String lockName;
  private final Duration waited;

  /**
   * @param lockName the lock that was not acquired
   * @param waited the wait that elapsed
   */
  public AcquireTimeoutException(String lockName, Duration waited) {
    super("lock '" + lockName + "' was not acquired within " + waited);
    this.lockName = lockName;
    this.waited = waited;
  }

  /** @return the lock that was not acquired */
  public String lockName() {
    return lockName;
  }

  /** @return the wait that elapsed */
  public Duration waited() {
    return waited;
  }
}
