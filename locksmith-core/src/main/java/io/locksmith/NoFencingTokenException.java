package io.locksmith;

/**
 * A fence refused an access because it carried no fencing token: {@link Lease#NO_FENCING_TOKEN} (0), the
 * token of a {@linkplain Lease#isDegraded() degraded} lease, or another value below 1, which no backend
 * mints. A degraded lease excludes only within its own JVM, so a resource fenced against stale holders
 * must not let it act: that would give up the protection the fence exists for. Nothing was admitted and
 * the fence is unchanged.
 *
 * <p>It is a {@link StaleTokenException}, so code that stops on a stale token stops here too; do not
 * retry with the same lease. Instances are immutable.
 */
public class NoFencingTokenException extends StaleTokenException {
  private static final long serialVersionUID = 1L;

  /**
   * @param resource the resource key the action was for
   * @param token the refused value (below 1)
   * @param highestSeen the largest token admitted for the resource so far, 0 if none
   */
  public NoFencingTokenException(String resource, long token, long highestSeen) {
    super(resource, token, highestSeen, "fencing token " + token + " for '" + resource + "' is not a fencing "
        + "token: tokens start at 1, and " + Lease.NO_FENCING_TOKEN + " is what a degraded (JVM-local) lease "
        + "carries; a fenced resource does not admit it");
  }
}
