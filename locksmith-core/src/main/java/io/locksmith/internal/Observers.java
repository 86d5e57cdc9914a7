package io.locksmith.internal;

import io.locksmith.Lease;
import io.locksmith.LeaseState;
import io.locksmith.LockObserver;
import java.time.Duration;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Calls a {@link LockObserver}, keeping its exceptions away from the lock machinery. Stateless. */
final class Observers {
  private static final Logger log = LoggerFactory.getLogger(Observers.class);

  private Observers() {}

  static void acquireCompleted(LockObserver observer, String name, String kind, long startedNanos,
      Optional<DefaultLease> granted, Throwable failure) {
    Duration elapsed = Duration.ofNanos(System.nanoTime() - startedNanos);
    LockObserver.Outcome outcome = failure != null ? LockObserver.Outcome.FAILED
        : granted.isPresent() ? LockObserver.Outcome.GRANTED : LockObserver.Outcome.TIMEOUT;
    Lease lease = failure == null ? granted.orElse(null) : null;
    try {
      observer.acquireCompleted(name, kind, outcome, elapsed, lease);
    } catch (RuntimeException e) {
      log.warn("lock observer {} failed on an acquisition of '{}'", observer, name, e);
    }
  }

  static void leaseStateChanged(LockObserver observer, Lease lease, LeaseState from, LeaseState to) {
    try {
      observer.leaseStateChanged(lease, from, to);
    } catch (RuntimeException e) {
      log.warn("lock observer {} failed on a state change of '{}'", observer, lease.lockName(), e);
    }
  }
}
