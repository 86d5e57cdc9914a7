package io.locksmith;

import java.time.Duration;
import java.util.Objects;

/**
 * {@link LeaseSource#acquire(Duration)} (or {@code acquireAsync}, {@code runLocked}, {@code callLocked})
 * gave up because the lock stayed held by other owners for the whole wait — for a semaphore, because
 * no permit was free. (The {@code tryAcquire} methods report the same outcome as an empty result.) The
 * message names the kind of lock and, for a semaphore, the permit count in force and the count this
 * caller declared, which differ when another client stored a different count first.
 */
public class AcquireTimeoutException extends LockException {
  private static final long serialVersionUID = 1L;
  private final String lockName;
  private final Duration waited;
  private final LockKind kind;

  /**
   * An exclusive lock's timeout, with the plain message {@code lock '<name>' was not acquired within
   * <wait>}.
   *
   * @param lockName the lock that was not acquired
   * @param waited the wait that elapsed
   */
  public AcquireTimeoutException(String lockName, Duration waited) {
    this(lockName, LockKind.EXCLUSIVE, waited, "lock '" + lockName + "' was not acquired within " + waited);
  }

  /**
   * @param lockName the lock that was not acquired
   * @param kind its kind
   * @param waited the wait that elapsed
   * @param message the whole message, naming the kind (and for a semaphore the counts)
   * @throws NullPointerException if {@code kind} is null
   */
  public AcquireTimeoutException(String lockName, LockKind kind, Duration waited, String message) {
    super(message);
    this.lockName = lockName;
    this.waited = waited;
    this.kind = Objects.requireNonNull(kind, "kind");
  }

  /** @return the lock that was not acquired */
  public String lockName() {
    return lockName;
  }

  /** @return the wait that elapsed */
  public Duration waited() {
    return waited;
  }

  /**
   * @return the kind of lock: {@link LockKind#READ_WRITE} for either side of a read-write lock (the
   *     message says which)
   */
  public LockKind kind() {
    return kind;
  }
}
