package io.locksmith.zookeeper;

/**
 * What the backend learns about held leases between the core's calls: the connection is suspended
 * (every lease of the client is uncertain), it is back in the same session (to be verified), or a lease
 * is lost (its session is over or may be, its node was deleted by someone else, its lease ran out). The
 * backend reports them to the core's {@link io.locksmith.spi.BackendEvents} ({@link #to}), and keeps the
 * same facts in its own records, so that its answers to renewals, re-entries and releases agree.
 * Implementations are thread-safe and return quickly.
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

  /**
   * @param events the core's sink
   * @return these events, reported to {@code events}: suspended as a dropped connection, back in the same
   *     session as a restored one (the core then verifies every lease with one renewal round), a lost
   *     lease as its owner evicted (the core marks it {@code LOST} at once)
   */
  static LeaseEvents to(io.locksmith.spi.BackendEvents events) {
    return new LeaseEvents() {
      @Override
      public void uncertain(String why) {
        events.connectionLost(why);
      }

      @Override
      public void restored(String why) {
        events.connectionRestored();
      }

      @Override
      public void lost(Side side, String name, String owner, String why) {
        events.ownerEvicted(side.holdKind(), name, owner, why);
      }
    };
  }

  /**
   * @param first reported to first
   * @param second then to this one
   * @return both
   */
  static LeaseEvents both(LeaseEvents first, LeaseEvents second) {
    return new LeaseEvents() {
      @Override
      public void uncertain(String why) {
        first.uncertain(why);
        second.uncertain(why);
      }

      @Override
      public void restored(String why) {
        first.restored(why);
        second.restored(why);
      }

      @Override
      public void lost(Side side, String name, String owner, String why) {
        first.lost(side, name, owner, why);
        second.lost(side, name, owner, why);
      }
    };
  }
}
