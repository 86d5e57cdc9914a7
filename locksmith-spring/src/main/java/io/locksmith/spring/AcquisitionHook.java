package io.locksmith.spring;

import io.locksmith.Lease;
import io.locksmith.LeaseState;
import io.locksmith.LockObserver;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Told when an acquisition through an {@link ObservingLockClient} starts and how it ends: the starter's way to
 * see the acquisitions of a client it did not build (an application's own {@code LockClient} bean, whose
 * {@code ClientOptions} observer is fixed) and to time lock waits as Micrometer observations, which need the
 * start of a wait and not only its end. Implementations must be thread-safe, quick and must not throw.
 */
interface AcquisitionHook {

  /**
   * An acquisition starts on the calling thread.
   *
   * @param lockName the lock's name
   * @param kind {@code exclusive}, {@code fair}, {@code read}, {@code write} or {@code semaphore}
   * @return told how it ended, exactly once
   */
  Pending started(String lockName, String kind);

  /** One acquisition in progress. */
  interface Pending {
    /** @param lease the lease granted */
    void granted(Lease lease);

    /**
     * @param outcome {@code TIMEOUT} or {@code FAILED}
     * @param error why it failed, or null for a wait that ran out
     */
    void notGranted(LockObserver.Outcome outcome, Throwable error);
  }

  /** @return one hook telling each of {@code hooks} in turn */
  static AcquisitionHook all(List<AcquisitionHook> hooks) {
    List<AcquisitionHook> copy = List.copyOf(hooks);
    if (copy.size() == 1) {
      return copy.get(0);
    }
    return (name, kind) -> {
      List<Pending> each = copy.stream().map(h -> h.started(name, kind)).toList();
      return new Pending() {
        @Override
        public void granted(Lease lease) {
          each.forEach(p -> p.granted(lease));
        }

        @Override
        public void notGranted(LockObserver.Outcome outcome, Throwable error) {
          each.forEach(p -> p.notGranted(outcome, error));
        }
      };
    };
  }

  /**
   * Tells {@code listener} of the lease's state changes until it ends, and of its end at once if it ended
   * before the listener was added ({@link Lease#addListener} reports changes "from now on" only, and an
   * async caller may release before the grant is reported). The end is reported once.
   */
  static void untilEnd(Lease lease, io.locksmith.LeaseListener listener) {
    AtomicBoolean ended = new AtomicBoolean();
    lease.addListener((l, from, to) -> {
      boolean last = to == LeaseState.RELEASED || to == LeaseState.LOST;
      if (!last || ended.compareAndSet(false, true)) {
        listener.stateChanged(l, from, to);
      }
    });
    LeaseState now = lease.state();
    if ((now == LeaseState.RELEASED || now == LeaseState.LOST) && ended.compareAndSet(false, true)) {
      listener.stateChanged(lease, LeaseState.HELD, now);
    }
  }

  /** A hook that reports to a {@link LockObserver}, as a client's own observer would be told. */
  static AcquisitionHook of(LockObserver observer) {
    return (name, kind) -> {
      long start = System.nanoTime();
      return new Pending() {
        @Override
        public void granted(Lease lease) {
          safely(() -> observer.acquireCompleted(name, kind, LockObserver.Outcome.GRANTED, elapsed(start), lease));
          untilEnd(lease, (l, from, to) -> safely(() -> observer.leaseStateChanged(l, from, to)));
        }

        @Override
        public void notGranted(LockObserver.Outcome outcome, Throwable error) {
          safely(() -> observer.acquireCompleted(name, kind, outcome, elapsed(start), null));
        }
      };
    };
  }

  private static java.time.Duration elapsed(long start) {
    return java.time.Duration.ofNanos(System.nanoTime() - start);
  }

  /** An observer's failure must not change the outcome of the caller's acquisition (as in core). */
  static void safely(Runnable r) {
    try {
      r.run();
    } catch (RuntimeException e) {
      org.slf4j.LoggerFactory.getLogger(AcquisitionHook.class).warn("lock observer failed: {}", e.toString());
    }
  }
}
