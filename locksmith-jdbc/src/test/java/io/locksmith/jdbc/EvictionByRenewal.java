package io.locksmith.jdbc;

import java.time.Duration;

/**
 * The force-unlock cases of the TCK subclasses for MariaDB and H2. Documented (docs/jdbc.md, Operators):
 * without a notification channel, a holder in another client learns of a force-unlock at its next
 * renewal, a third of its lease after the grant; the holder's own client is told at once. So the case's
 * lease is short, and the bound is that renewal plus an allowance.
 */
final class EvictionByRenewal {
  /** The case's watched lease (the TCK's {@code evictionCaseLease()}): its first renewal is 1 s after the grant. */
  static final Duration LEASE = Duration.ofSeconds(3);
  /** Renewal 1 s after the grant + its round trip and the listener's thread, allowed 2 s on a loaded machine. */
  static final Duration BOUND = LEASE.dividedBy(3).plusSeconds(2);

  private EvictionByRenewal() {}
}
