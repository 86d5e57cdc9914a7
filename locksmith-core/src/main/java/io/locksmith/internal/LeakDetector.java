package io.locksmith.internal;

import io.locksmith.Lease;
import java.lang.ref.PhantomReference;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;

/**
 * Finds lease-view leases whose holder dropped them without release. Each handed-out {@link
 * LeaseHandle} is registered with a phantom reference; the reference holds the {@link DefaultLease}
 * (what the client renews) and where it was acquired, never the handle. Once the collector finds the
 * handle unreachable the reference is queued, and {@link #poll()} (run by the client's timer) hands the
 * lease to the client to report and release. A handle released or closed is unregistered first.
 *
 * <p>A phantom reference and a queue polled by the timer thread the client already has, rather than a
 * {@link java.lang.ref.Cleaner}: a cleaner brings a thread of its own, which would outlive {@code
 * close()}. Thread-safe.
 */
final class LeakDetector {
  private final ReferenceQueue<Lease> queue = new ReferenceQueue<>();
  /** Keeps the references themselves reachable until they are queued or dismissed. */
  private final Set<Tracked> tracked = ConcurrentHashMap.newKeySet();
  private final BiConsumer<DefaultLease, Throwable> onDropped;

  /** @param onDropped told of each lease whose handle became unreachable, with its acquisition site */
  LeakDetector(BiConsumer<DefaultLease, Throwable> onDropped) {
    this.onDropped = onDropped;
  }

  /** A handle's registration. */
  final class Tracked extends PhantomReference<Lease> {
    final DefaultLease lease;
    final Throwable acquiredAt;

    Tracked(Lease handle, DefaultLease lease, Throwable acquiredAt) {
      super(handle, queue);
      this.lease = lease;
      this.acquiredAt = acquiredAt;
    }

    /** The holder ended the lease itself: nothing to detect any more. */
    void dismiss() {
      clear();
      tracked.remove(this);
    }
  }

  Tracked track(Lease handle, DefaultLease lease, Throwable acquiredAt) {
    Tracked t = new Tracked(handle, lease, acquiredAt);
    tracked.add(t);
    return t;
  }

  /** @return how many handed-out leases are registered (neither ended nor found dropped yet) */
  int size() {
    return tracked.size();
  }

  /** Reports every lease found dropped since the last call; never blocks. */
  void poll() {
    Reference<? extends Lease> r;
    while ((r = queue.poll()) != null) {
      Tracked t = (Tracked) r;
      if (tracked.remove(t)) { // not dismissed meanwhile
        onDropped.accept(t.lease, t.acquiredAt);
      }
    }
  }
}
