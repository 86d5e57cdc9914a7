package io.locksmith.internal;

import io.locksmith.LeaseState;
import io.locksmith.LockObserver;
import io.locksmith.spi.BackendEvents;
import io.locksmith.spi.HoldKind;
import io.locksmith.spi.LockOps;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A client's side of {@link BackendEvents}: what the backend observes about the connection and about
 * holds removed by others is applied to the client's live leases at once, instead of at each lease's
 * next renewal. Also keeps the log of uncertainty readable: one WARN when leases of the client become
 * {@link LeaseState#UNCERTAIN} (with how many), DEBUG per lease, one INFO when none is uncertain any
 * more.
 *
 * <p>Thread-safe. Backend calls return at once: connection events are handed to the client's timer
 * thread, which keeps them in the order they were reported and never blocks an I/O thread; an eviction
 * notice is applied on the calling thread (marking a lease lost is a state change and a hand-off of its
 * listeners to the event thread).
 */
final class LeaseSignals implements BackendEvents {
  private static final Logger log = LoggerFactory.getLogger(DefaultLockClient.class);
  /** How long a notice that matched no lease is kept for a grant whose reply may still be on its way. */
  private static final long UNMATCHED_NOTICE_NANOS = TimeUnit.SECONDS.toNanos(10);
  /** At most this many unmatched notices are kept (an operator unlocking leases this client released). */
  private static final int UNMATCHED_NOTICES_MAX = 1024;
  /** Lock names listed in one WARN, at most. */
  private static final int NAMES_LOGGED = 5;

  private final DefaultLockClient client;
  /**
   * The kind of hold each lock-kind operations object serves, as the client handed them out. Weak: some
   * backends create an operations object per lock object.
   */
  private final Map<LockOps, HoldKind> kinds = Collections.synchronizedMap(new WeakHashMap<>());
  /** The client's leases that are {@link LeaseState#UNCERTAIN} now. */
  private final Set<DefaultLease> uncertain = ConcurrentHashMap.newKeySet();
  /** Whether the WARN of the current uncertainty episode was logged; reset once none is uncertain. */
  private final AtomicBoolean episode = new AtomicBoolean();
  /** Notices for owners that had no live lease yet, owner id to when: see {@link #leaseCreated}. */
  private final Map<String, Long> unmatched = new ConcurrentHashMap<>();

  LeaseSignals(DefaultLockClient client) {
    this.client = client;
  }

  /** {@code ops} serves holds of {@code kind}: called when the client hands out a lock object. */
  void register(LockOps ops, HoldKind kind) {
    kinds.put(ops, kind);
  }

  // ------------------------------------------------------------------ BackendEvents

  @Override
  public void connectionLost(String cause) {
    client.runOnTimer(() -> {
      List<DefaultLease> affected = new ArrayList<>();
      for (DefaultLease lease : client.liveLeases()) {
        if (lease.markUncertain("the connection to the backend dropped")) {
          affected.add(lease);
        }
      }
      if (affected.isEmpty()) {
        log.debug("lock client {}: the connection to the backend dropped ({}); no lease held", client.clientId(),
            cause);
      } else {
        reportUncertain(affected, "the connection to the backend dropped (" + cause + ")");
      }
    });
  }

  @Override
  public void connectionRestored() {
    client.runOnTimer(() -> {
      int sent = client.renewer().verifyNow(client.liveLeases());
      if (sent > 0) {
        log.debug("lock client {}: connection to the backend restored; verifying {} lease(s) now",
            client.clientId(), sent);
      }
      client.verifyDelayedReleases(); // locks released after a delay are not leases any more, but must last

    });
  }

  @Override
  public void ownerEvicted(HoldKind kind, String name, String owner, String cause) {
    if (kind == null || name == null || owner == null || !owner.startsWith(client.clientId() + ":")) {
      return; // not one of this client's owner ids: never act on someone else's notice
    }
    boolean matched = false;
    for (DefaultLease lease : client.liveLeases()) {
      if (lease.owner().equals(owner) && lease.lockName().equals(name) && kindMatches(lease, kind)) {
        matched = true;
        // the backend names the cause (a force-unlock, a session that ran out, ...): never guess "someone else"
        lease.markLost("the backend reports its hold gone: " + cause);
      }
    }
    if (!matched) {
      rememberUnmatched(owner);
    }
  }

  private boolean kindMatches(DefaultLease lease, HoldKind kind) {
    HoldKind known = kinds.get(lease.ops);
    return known == null || known == kind; // an unregistered kind: the owner id alone decides
  }

  /**
   * A notice may overtake the reply of the grant it concerns (they travel on different connections), or
   * concern a lease being released. Such an owner id is remembered for a while; a lease created for it
   * meanwhile is verified at once instead of being marked lost, because the grant it came from may also
   * be a later one (an acquisition retries with the same owner id).
   */
  private void rememberUnmatched(String owner) {
    long now = System.nanoTime();
    if (unmatched.size() >= UNMATCHED_NOTICES_MAX) {
      for (Iterator<Long> it = unmatched.values().iterator(); it.hasNext(); ) {
        if (now - it.next() > UNMATCHED_NOTICE_NANOS) {
          it.remove();
        }
      }
      if (unmatched.size() >= UNMATCHED_NOTICES_MAX) {
        return; // a burst of stale notices: the next renewal still finds any loss
      }
    }
    unmatched.put(owner, now);
  }

  /** A lease was just granted: if a notice for its owner came first, verify it now. */
  void leaseCreated(DefaultLease lease) {
    if (unmatched.isEmpty()) {
      return;
    }
    Long at = unmatched.remove(lease.owner());
    if (at != null && System.nanoTime() - at <= UNMATCHED_NOTICE_NANOS) {
      client.runOnTimer(() -> client.renewer().verifyNow(List.of(lease)));
    }
  }

  // ------------------------------------------------------------------ uncertainty log

  /** @return whether {@code lease} is counted as {@link LeaseState#UNCERTAIN} now (for tests) */
  boolean countsAsUncertain(DefaultLease lease) {
    return uncertain.contains(lease);
  }

  /** Called by every lease after each state change, outside its monitor. */
  void stateChanged(DefaultLease lease, LeaseState from, LeaseState to) {
    LockObserver observer = client.options().observer().orElse(null);
    if (observer != null) {
      Observers.leaseStateChanged(observer, lease, from, to);
    }
    if (to == LeaseState.UNCERTAIN) {
      uncertain.add(lease);
    } else if (from == LeaseState.UNCERTAIN && uncertain.remove(lease) && uncertain.isEmpty()
        && episode.compareAndSet(true, false)) {
      log.info("lock client {}: no lease is UNCERTAIN any more (each was confirmed by the backend, lost or "
          + "released)", client.clientId());
    }
  }

  /**
   * Leases just became {@link LeaseState#UNCERTAIN}: one WARN for the episode, DEBUG afterwards.
   *
   * @param leases the leases that changed now
   * @param cause why
   */
  void reportUncertain(List<DefaultLease> leases, String cause) {
    if (leases.isEmpty()) {
      return;
    }
    if (episode.compareAndSet(false, true)) {
      List<String> names = new ArrayList<>();
      for (DefaultLease lease : leases) {
        if (names.size() == NAMES_LOGGED) {
          names.add("...");
          break;
        }
        names.add("'" + lease.lockName() + "'");
      }
      log.warn("lock client {}: {} lease(s) now UNCERTAIN, {}: each may already be lost; it is HELD again once "
          + "the backend confirms it, LOST if its validity runs out first (locks {})", client.clientId(),
          leases.size(), cause, String.join(", ", names));
      if (uncertain.isEmpty()) {
        episode.compareAndSet(true, false); // all settled meanwhile: the next episode warns again
      }
    } else {
      log.debug("lock client {}: {} more lease(s) UNCERTAIN: {}", client.clientId(), leases.size(), cause);
    }
  }
}
