package io.locksmith.spi;

/**
 * What a backend tells its client about the leases it holds, apart from the answers to its calls, so
 * that a lease's state follows what the backend knows instead of waiting for its next renewal (see
 * {@link io.locksmith.LeaseState}). Given to the backend in {@link BackendContext#events()}; the client
 * implements it. A backend that cannot observe one of these events simply never reports it: its leases
 * then learn the same at their next renewal, as before.
 *
 * <p>Thread-safe. Every method returns quickly, never blocks and never throws, so a backend may call it
 * on an I/O thread. Reporting an event twice does no harm.
 */
public interface BackendEvents {

  /** Ignores every event: for a backend opened outside a client. */
  BackendEvents NONE = new BackendEvents() {};

  /**
   * The connection that carries this client's renewals dropped (or, for a backend spread over several
   * servers, so many of them became unreachable that no lease can be confirmed). Every lease of the
   * client that is {@link io.locksmith.LeaseState#HELD} becomes {@link io.locksmith.LeaseState#UNCERTAIN}
   * now; it returns to {@code HELD} only when the backend confirms it again, not merely on reconnect.
   *
   * @param cause what happened, for the log (e.g. which server)
   */
  default void connectionLost(String cause) {}

  /**
   * The connection is back, or may now lead somewhere else (a failover, a server that restarted): the
   * client verifies every live lease now, with one renewal round, rather than at each lease's next
   * renewal. A lease the backend no longer has becomes {@link io.locksmith.LeaseState#LOST}, a confirmed
   * one {@link io.locksmith.LeaseState#HELD}. Call it once the connection accepts commands.
   */
  default void connectionRestored() {}

  /**
   * Somebody else removed a hold of this client (an operator's force-unlock, a take-over): the lease
   * whose owner id, lock name and kind are these becomes {@link io.locksmith.LeaseState#LOST} now. The
   * owner id decides: a notice never ends a lease of another owner, even of the same lock.
   *
   * @param kind the kind of the removed hold
   * @param name the lock name (without namespace)
   * @param owner the owner id of the removed hold
   * @param cause what removed it, for the log (e.g. "force-unlocked")
   */
  default void ownerEvicted(HoldKind kind, String name, String owner, String cause) {}
}
