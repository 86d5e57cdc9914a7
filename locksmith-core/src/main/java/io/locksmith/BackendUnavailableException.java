package io.locksmith;

/**
 * The backend could not be reached, or did not answer within the command timeout. Nothing was granted:
 * Locksmith fails closed. For a lease already held, the same condition moves the lease to
 * {@link LeaseState#UNCERTAIN} rather than throwing.
 *
 * <p>This is the transient failure: an acquisition that may wait retries it until its wait runs out
 * and throws it only then, naming the wait, with the last attempt's failure as the cause; a call that
 * does not wait throws it at once.
 */
public class BackendUnavailableException extends LockException {
  private static final long serialVersionUID = 1L;

  /** @param message what could not be done, and why */
  public BackendUnavailableException(String message) {
    super(message, null);
  }

  /**
   * @param message what could not be done
   * @param cause the client library's exception, kept for diagnosis
   */
  public BackendUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
