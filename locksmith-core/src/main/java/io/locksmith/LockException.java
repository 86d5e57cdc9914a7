package io.locksmith;

/**
 * Root of every exception Locksmith throws for lock-service failures. Unchecked, so that code written
 * against {@link java.util.concurrent.locks.Lock} stays unchanged; catch this type to handle every
 * lock failure in one place. {@link BackendUnavailableException} is transient (retry later); {@link
 * BackendConfigurationException} is not (fix the configuration).
 *
 * <p>Programming errors are reported with the JDK's own types instead: {@link NullPointerException}
 * and {@link IllegalArgumentException} for bad input, {@link IllegalStateException} for use of a
 * closed client, {@link IllegalMonitorStateException} for unlocking a lock the thread does not hold.
 * Backend exceptions are translated in one place per backend and kept as the {@linkplain #getCause()
 * cause}.
 */
public class LockException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message what failed, with the lock name where there is one
   * @param cause the backend's exception, or {@code null}
   */
  public LockException(String message, Throwable cause) {
    super(message, cause);
  }

  /** @param message what failed, with the lock name where there is one */
  public LockException(String message) {
    super(message);
  }
}
