package io.locksmith;

/** How strongly a backend's fencing tokens increase; see {@link Capabilities#fencing()}. */
public enum FencingGuarantee {
  /**
   * Strictly increasing across successive grants of one lock name under every failure the backend
   * tolerates (consensus log, durable database sequence, or a single JVM's memory).
   */
  STRICT,
  /**
   * Strictly increasing while the server keeps its data. If the data is lost (restart without
   * persistence, failover to a replica that missed writes), tokens still increase as long as the
   * serving node's wall clock is ahead of the clock that minted the last token: tokens are floored at
   * the server's time in microseconds. A server clock stepped backwards can then make a token regress.
   */
  CLOCK_FLOORED
}
