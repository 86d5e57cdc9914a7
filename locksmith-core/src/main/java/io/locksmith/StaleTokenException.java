package io.locksmith;

/**
 * A {@link FenceGuard} refused an action because its fencing token is smaller than the largest token
 * the guard has already admitted for the same resource: the holder that sent it has been superseded by
 * a later grant of the lock. This is the expected outcome for a holder that was paused, partitioned or
 * delayed past its lease; it is not a fault of the guard. Do not retry with the same token.
 *
 * <p>Instances are immutable.
 */
public class StaleTokenException extends LockException {
  private static final long serialVersionUID = 1L;
  private final String resource;
  private final long token;
  private final long highestSeen;

  /**
   * @param resource the resource key the action was for
   * @param token the token that was refused
   * @param highestSeen the largest token the guard had admitted for {@code resource}
   */
  public StaleTokenException(String resource, long token, long highestSeen) {
    this(resource, token, highestSeen, "fencing token " + token + " for '" + resource + "' is stale: token "
        + highestSeen + " has already been admitted");
  }

  /**
   * For subclasses that refuse a token for another reason than a larger one admitted.
   *
   * @param resource the resource key the action was for
   * @param token the token that was refused
   * @param highestSeen the largest token the guard had admitted for {@code resource}, or 0 if none
   * @param message why the token was refused
   */
  protected StaleTokenException(String resource, long token, long highestSeen, String message) {
    super(message);
    this.resource = resource;
    this.token = token;
    this.highestSeen = highestSeen;
  }

  /** @return the resource key the refused action was for */
  public String resource() {
    return resource;
  }

  /** @return the refused token */
  public long token() {
    return token;
  }

  /** @return the largest token admitted for the resource when the action was refused */
  public long highestSeen() {
    return highestSeen;
  }
}
