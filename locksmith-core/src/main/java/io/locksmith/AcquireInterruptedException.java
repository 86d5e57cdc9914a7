package io.locksmith;

/**
 * The thread was interrupted while {@link LeaseSource#runLocked} or {@link LeaseSource#callLocked} was
 * waiting for the lock (or was already interrupted when it called). Nothing is held and the task did
 * not run. The thread's interrupt status is set again before this is thrown, so code further up still
 * sees the interrupt; the {@linkplain #getCause() cause} is the {@link InterruptedException}.
 *
 * <p>Unchecked so that {@code runLocked} can be called where {@link InterruptedException} cannot be
 * declared (a {@link Runnable}, a stream, a framework callback). The other waiting methods keep their
 * checked {@code InterruptedException}.
 */
public class AcquireInterruptedException extends LockException {
  private static final long serialVersionUID = 1L;
  private final String lockName;

  /**
   * @param lockName the lock that was being waited for
   * @param cause the interrupt
   */
  public AcquireInterruptedException(String lockName, InterruptedException cause) {
    super("interrupted while waiting for lock '" + lockName + "'; nothing is held", cause);
    this.lockName = lockName;
  }

  /** @return the lock that was being waited for */
  public String lockName() {
    return lockName;
  }
}
