package io.locksmith.zookeeper;

/**
 * Where the backend reports what it learns about held leases between the core's calls: the connection
 * is suspended (every lease of the client is uncertain), it is back in the same session (held again),
 * or a lease is lost (its session is over or may be, its node is gone, its lease ran out). The backend
 * keeps the same facts in its own records, so the core learns them at the latest from its next renewal,
 * re-entry or release of that lease; this is the early path. Implementations are thread-safe and return
 * quickly.
 */
interface LeaseEvents {
  /** The connection is suspended: every lease of this client may already be gone. */
  void uncertain(String why);

  /** The connection is back in the same session: the leases still marked held are held. */
  void restored(String why);

  /**
   * One lease is lost.
   *
   * @param side its lock kind or side
   * @param name the lock name
   * @param owner the lease's owner id
   * @param why what happened
   */
  void lost(Side side, String name, String owner, String why);
}
