package io.locksmith.internal;

import io.locksmith.Lease;
import java.lang.ref.Cleaner;
import java.lang.ref.WeakReference;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lease of a degradable lock: it holds the lock's JVM-local permit (see {@link LocalLocks}) besides,
 * for {@link BackendLease}, the backend's lease, or, for {@link DegradedLease}, nothing else. The permit
 * is freed exactly once: by release, by the client's close, by a degraded fixed lease's expiry, or, for a
 * lease dropped without release, after garbage collection (logged), so that one forgotten lease cannot
 * lock the name in this JVM for good.
 */
abstract class LocalLease implements Lease {
  private static final Logger log = LoggerFactory.getLogger(LocalLease.class);
  /** One daemon thread for the JVM, started with the first degradable lease. */
  private static final Cleaner CLEANER = Cleaner.create(r -> {
    Thread t = new Thread(r, "locksmith-local-lease-cleaner");
    t.setDaemon(true);
    return t;
  });

  final DegradableLock lock;
  final Permit permit;
  /** Lock-view re-entries of the owning thread; 1 for a lease-view lease. */
  final AtomicInteger holds = new AtomicInteger(1);
  /** Registered with the client; weak, so that it does not keep a dropped lease reachable. */
  private final Runnable onClose;

  LocalLease(DegradableLock lock, Permit permit) {
    this.lock = lock;
    this.permit = permit;
    this.onClose = new CloseHook(new WeakReference<>(this), permit);
    CLEANER.register(this, new Dropped(permit, lock.name()));
    lock.client().addCloseHook(onClose);
  }

  /** The client is closing: end this lease and free the permit. */
  abstract void endOnClose();

  /** Frees the permit and forgets the close hook; idempotent. */
  final void freePermit() {
    lock.client().removeCloseHook(onClose);
    permit.free();
  }

  /** One holder's claim on the local permit of a key. */
  static final class Permit {
    final String key;
    private final AtomicBoolean freed = new AtomicBoolean();

    Permit(String key) {
      this.key = key;
    }

    /** @return whether this call freed it (false if it was already) */
    boolean free() {
      if (freed.compareAndSet(false, true)) {
        LocalLocks.release(key);
        return true;
      }
      return false;
    }
  }

  /** Ends the lease when its client closes, or only frees the permit if the lease was dropped. */
  private record CloseHook(WeakReference<LocalLease> lease, Permit permit) implements Runnable {
    @Override
    public void run() {
      LocalLease l = lease.get();
      if (l != null) {
        l.endOnClose();
      } else {
        permit.free();
      }
    }
  }

  /** Frees the permit of a lease nobody can release any more; must not refer to the lease. */
  private record Dropped(Permit permit, String lockName) implements Runnable {
    @Override
    public void run() {
      if (permit.free()) {
        log.warn("a lease of degradable lock '{}' became unreachable without being released; its JVM-local "
            + "lock is freed now. Release leases in a finally block or with try-with-resources", lockName);
      }
    }
  }
}
