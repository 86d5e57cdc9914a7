package io.locksmith.spring;

import io.locksmith.Lease;
import io.locksmith.LeaseState;
import io.locksmith.LockObserver;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The leases one client holds now, for the health indicator and the {@code locksmith} endpoint; also
 * passes every event on to the metrics observer, if there is one. Thread-safe.
 */
final class LeaseTracker implements LockObserver {

  private final Set<Lease> live = ConcurrentHashMap.newKeySet();
  private final LockObserver next;

  LeaseTracker(LockObserver next) {
    this.next = next;
  }

  @Override
  public void acquireCompleted(String lockName, String kind, Outcome outcome, Duration elapsed, Lease lease) {
    if (lease != null) {
      live.add(lease);
    }
    if (next != null) {
      next.acquireCompleted(lockName, kind, outcome, elapsed, lease);
    }
  }

  @Override
  public void leaseStateChanged(Lease lease, LeaseState from, LeaseState to) {
    if (to == LeaseState.RELEASED || to == LeaseState.LOST) {
      live.remove(lease);
    }
    if (next != null) {
      next.leaseStateChanged(lease, from, to);
    }
  }

  /**
   * @return a snapshot of the leases held now; a lease that ended is left out at once, although the end of a
   *     lease observed through a listener ({@link ApplicationLockClients}) is reported on the event thread, later
   */
  List<Lease> held() {
    return live.stream().filter(l -> l.state() != LeaseState.RELEASED && l.state() != LeaseState.LOST).toList();
  }

  /** @return how many held leases are UNCERTAIN */
  long uncertain() {
    return held().stream().filter(l -> l.state() == LeaseState.UNCERTAIN).count();
  }
}
