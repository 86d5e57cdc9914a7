package io.locksmith.internal;

import io.locksmith.Lease;
import java.lang.ref.PhantomReference;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BiConsumer;

/**
 * Finds lease-view leases whose holder dropped them without release. Each handed-out {@link
 * LeaseHandle} is registered with a phantom reference; the reference holds the {@link DefaultLease}
 * (what the client renews) and where it was acquired, never the handle. Once the collector finds the
 * handle unreachable the reference is queued, and {@link #poll()} (run by the client's timer) hands the
 * lease to the client to report and release. A handle released or closed is unregistered first.
 *
 * <p>A phantom reference must stay strongly reachable until it is queued: the lease itself keeps its
 * registration ({@link DefaultLease#keepTracking}), and the client keeps every lease it has not ended. So
 * a registration costs no shared set on the path every acquire and release takes; once the client ends
 * the lease (lost, released) it needs no report, and the registration is ended with it
 * ({@link DefaultLease#endTracking}).
 *
 * <p>A phantom reference and a queue polled by the timer thread the client already has, rather than a
 * {@link java.lang.ref.Cleaner}: a cleaner brings a thread of its own, which would outlive {@code
 * close()}. Thread-safe.
 */
final class LeakDetector {
  private final ReferenceQueue<Lease> queue = new ReferenceQueue<>();
  /** Registrations neither ended nor found dropped yet (for tests and diagnostics). */
  private final LongAdder registered = new LongAdder();
  private final BiConsumer<DefaultLease, Throwable> onDropped;

  /** @param onDropped told of each lease whose handle became unreachable, with its acquisition site */
  LeakDetector(BiConsumer<DefaultLease, Throwable> onDropped) {
    this.onDropped = onDropped;
  }

  /** A handle's registration. */
  static final class Tracked extends PhantomReference<Lease> {
    private static final AtomicIntegerFieldUpdater<Tracked> ENDED =
        AtomicIntegerFieldUpdater.newUpdater(Tracked.class, "ended");
    private final LeakDetector detector;
    final DefaultLease lease;
    final Throwable acquiredAt;
    /** 1 once dismissed or reported: whichever comes first wins. */
    private volatile int ended;

    private Tracked(LeakDetector detector, Lease handle, DefaultLease lease, Throwable acquiredAt) {
      super(handle, detector.queue);
      this.detector = detector;
      this.lease = lease;
      this.acquiredAt = acquiredAt;
    }

    /** The holder ended the lease itself: nothing to detect any more. */
    void dismiss() {
      if (end()) {
        clear();
      }
    }

    /** @return whether this call ended the registration (it was neither dismissed nor reported before) */
    private boolean end() {
      if (ENDED.compareAndSet(this, 0, 1)) {
        detector.registered.decrement();
        return true;
      }
      return false;
    }
  }

  Tracked track(Lease handle, DefaultLease lease, Throwable acquiredAt) {
    Tracked t = new Tracked(this, handle, lease, acquiredAt);
    registered.increment();
    lease.keepTracking(t);
    if (lease.hasEnded()) {
      t.dismiss(); // ended before it was handed out: the client's endTracking may have come before this
    }
    return t;
  }

  /** @return how many handed-out leases are registered (neither ended nor found dropped yet) */
  int size() {
    return (int) registered.sum();
  }

  /** Reports every lease found dropped since the last call; never blocks. */
  void poll() {
    Reference<? extends Lease> r;
    while ((r = queue.poll()) != null) {
      Tracked t = (Tracked) r;
      if (t.end()) { // not dismissed meanwhile
        onDropped.accept(t.lease, t.acquiredAt);
      }
    }
  }
}
