package io.locksmith;

/**
 * The backend was reached, or could have been, but the client's configuration does not fit it: the
 * server's TLS certificate is not trusted or does not name the host, the port does not speak the
 * protocol configured (TLS to a plain-text port), the host name does not resolve, the server rejected
 * the credentials, or the user lacks a permission the client needs. Nothing was granted.
 *
 * <p><b>Not transient.</b> Unlike {@link BackendUnavailableException}, retrying the same call with the
 * same configuration will fail the same way; a retry loop that waits for the backend to come back
 * should stop on this exception and report it. The message says what did not fit, with the root
 * cause's own text (e.g. the TLS library's or the server's reply); the cause is kept for diagnosis.
 * Messages never contain passwords.
 *
 * <p>Programming errors found before anything is sent (a malformed URI, an out-of-range setting) are
 * reported as {@link IllegalArgumentException} instead, by the builder that received them.
 */
public class BackendConfigurationException extends LockException {
  private static final long serialVersionUID = 1L;

  /** @param message what did not fit, and the root cause's text */
  public BackendConfigurationException(String message) {
    super(message, null);
  }

  /**
   * @param message what did not fit, and the root cause's text
   * @param cause the client library's exception, kept for diagnosis
   */
  public BackendConfigurationException(String message, Throwable cause) {
    super(message, cause);
  }
}
