package io.locksmith.internal;

import io.locksmith.Lease;
import io.locksmith.LeaseListener;
import io.locksmith.LeaseState;
import java.time.Duration;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.concurrent.CompletionStage;

/**
 * A degradable lock's lease granted by the backend: the backend's lease, plus the lock's JVM-local
 * permit, which keeps degraded holders in this JVM out while it is held (and is freed when it is
 * released). Everything else is the backend lease's.
 */
final class BackendLease extends LocalLease {
  private final Lease remote;
  /**
   * Set by the first of {@code release}, {@code releaseAsync}, {@code releaseAfter} and {@code close}: that
   * call decides when the permit is freed, and later ones leave it alone (a {@code close()} after
   * {@code releaseAfter} must not free it before the delay is over).
   */
  private final java.util.concurrent.atomic.AtomicBoolean ended = new java.util.concurrent.atomic.AtomicBoolean();

  BackendLease(DegradableLock lock, Permit permit, Lease remote) {
    super(lock, permit);
    this.remote = remote;
  }

  @Override
  void endOnClose() {
    freePermit(); // the client releases the backend lease itself
  }

  @Override
  public String lockName() {
    return remote.lockName();
  }

  @Override
  public long fencingToken() {
    return remote.fencingToken();
  }

  @Override
  public OptionalInt replicasAcknowledged() {
    return remote.replicasAcknowledged();
  }

  @Override
  public LeaseState state() {
    return remote.state();
  }

  @Override
  public Duration remainingValidity() {
    return remote.remainingValidity();
  }

  @Override
  public int holdCount() {
    return remote.state().isFinal() ? 0 : holds.get();
  }

  @Override
  public Lease checkHeld() {
    remote.checkHeld();
    return this;
  }

  @Override
  public boolean release() {
    boolean first = ended.compareAndSet(false, true);
    try {
      return remote.release();
    } finally {
      if (first) {
        freePermit();
      }
    }
  }

  @Override
  public CompletionStage<Boolean> releaseAsync() {
    if (!ended.compareAndSet(false, true)) {
      return remote.releaseAsync();
    }
    try {
      return remote.releaseAsync().whenComplete((owned, failure) -> freePermit());
    } catch (RuntimeException e) {
      freePermit();
      throw e;
    }
  }

  /**
   * The backend lease keeps the lock for the delay; this JVM's permit is kept as long (while the client is
   * open), so that a degraded holder here cannot take what the backend still holds.
   */
  @Override
  public boolean releaseAfter(Duration delay) {
    long millis = DefaultLease.releaseDelayMillis(delay); // bad input throws before anything changes
    if (!ended.compareAndSet(false, true)) {
      return remote.releaseAfter(delay);
    }
    boolean kept = false;
    try {
      kept = remote.releaseAfter(delay);
      return kept;
    } finally {
      if (kept && millis > 0) {
        lock.client().schedule(this::freePermit, delay.toNanos());
      } else {
        freePermit();
      }
    }
  }

  @Override
  public void close() {
    boolean first = ended.compareAndSet(false, true);
    try {
      remote.close();
    } finally {
      if (first) {
        freePermit();
      }
    }
  }

  @Override
  public Lease addListener(LeaseListener listener) {
    Objects.requireNonNull(listener, "listener");
    // weakly: the backend lease is kept by the client, and must not keep this one from being found dropped
    java.lang.ref.WeakReference<Lease> self = new java.lang.ref.WeakReference<>(this);
    remote.addListener((lease, from, to) -> {
      Lease mine = self.get();
      listener.stateChanged(mine != null ? mine : lease, from, to);
    });
    return this;
  }

  @Override
  public Lease onLost(Runnable action) {
    remote.onLost(action);
    return this;
  }

  @Override
  public String toString() {
    return "Lease[" + lockName() + ", token " + fencingToken() + ", " + state() + ", via the backend]";
  }
}
