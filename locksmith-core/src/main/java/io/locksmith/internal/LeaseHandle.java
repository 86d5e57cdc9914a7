package io.locksmith.internal;

import io.locksmith.Lease;
import io.locksmith.LeaseListener;
import io.locksmith.LeaseState;
import java.time.Duration;
import java.util.OptionalInt;
import java.util.concurrent.CompletionStage;

/**
 * The object a lease-view caller holds. Everything is delegated to the {@link DefaultLease}, which the
 * client keeps (renewer, live set, listeners); nothing the client keeps refers to this handle strongly,
 * so it becomes unreachable exactly when the caller dropped it, and the {@link LeakDetector} finds out.
 * Releasing or closing through the handle tells the detector that the lease ended properly.
 */
final class LeaseHandle implements Lease {
  final DefaultLease lease;
  /** The detector's registration, or null when leak detection is off. */
  private final LeakDetector.Tracked tracked;

  LeaseHandle(DefaultLease lease, LeakDetector detector, Throwable acquiredAt) {
    this.lease = lease;
    this.tracked = detector == null ? null : detector.track(this, lease, acquiredAt);
  }

  /** @return the lease behind {@code lease}, or null if it is not one of ours */
  static DefaultLease unwrap(Lease lease) {
    if (lease instanceof LeaseHandle h) {
      return h.lease;
    }
    return lease instanceof DefaultLease d ? d : null;
  }

  private void dismiss() {
    if (tracked != null) {
      tracked.dismiss();
    }
  }

  @Override
  public String lockName() {
    return lease.lockName();
  }

  @Override
  public long fencingToken() {
    return lease.fencingToken();
  }

  @Override
  public OptionalInt replicasAcknowledged() {
    return lease.replicasAcknowledged();
  }

  @Override
  public LeaseState state() {
    return lease.state();
  }

  @Override
  public Duration remainingValidity() {
    return lease.remainingValidity();
  }

  @Override
  public int holdCount() {
    return lease.holdCount();
  }

  @Override
  public Lease checkHeld() {
    lease.checkHeld();
    return this;
  }

  @Override
  public boolean release() {
    try {
      return lease.release();
    } finally {
      dismiss();
    }
  }

  @Override
  public CompletionStage<Boolean> releaseAsync() {
    try {
      return lease.releaseAsync();
    } finally {
      dismiss();
    }
  }

  @Override
  public boolean releaseAfter(Duration delay) {
    try {
      return lease.releaseAfter(delay);
    } finally {
      dismiss();
    }
  }

  @Override
  public void close() {
    try {
      lease.close();
    } finally {
      dismiss();
    }
  }

  @Override
  public Lease addListener(LeaseListener listener) {
    lease.publishedAs(this); // listeners are given this handle, the object the caller holds
    lease.addListener(listener);
    return this;
  }

  @Override
  public Lease onLost(Runnable action) {
    lease.publishedAs(this);
    lease.onLost(action);
    return this;
  }

  @Override
  public String toString() {
    return lease.toString();
  }
}
