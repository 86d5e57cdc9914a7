package io.locksmith.spring;

import io.locksmith.LockException;
import java.time.Duration;

/**
 * Thrown by a {@link DistributedLock @DistributedLock} method whose lock was not obtained (under the
 * default {@link DistributedLock.OnFailure#THROW} policy): the wait ran out, the backend could not be
 * reached, or the thread was interrupted while waiting. The method did not run. The cause, if any, is
 * the backend's exception ({@code BackendUnavailableException}, {@code AcquireInterruptedException}).
 */
public class LockNotAcquiredException extends LockException {
  private static final long serialVersionUID = 1L;

  private final String lockName;
  private final Duration waited;

  /**
   * @param lockName the lock's name (as evaluated)
   * @param waited how long the call was prepared to wait
   * @param message what happened
   * @param cause the backend's exception, or null after a plain timeout
   */
  public LockNotAcquiredException(String lockName, Duration waited, String message, Throwable cause) {
    super(message, cause);
    this.lockName = lockName;
    this.waited = waited;
  }

  /**
   * The lock's name.
   *
   * @return the evaluated name
   */
  public String lockName() {
    return lockName;
  }

  /**
   * How long the call was prepared to wait.
   *
   * @return the wait
   */
  public Duration waited() {
    return waited;
  }
}
