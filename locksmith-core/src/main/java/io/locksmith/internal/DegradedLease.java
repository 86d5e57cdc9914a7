package io.locksmith.internal;

import io.locksmith.Lease;
import io.locksmith.LeaseListener;
import io.locksmith.LeaseLostException;
import io.locksmith.LeaseState;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lease granted by a degradable lock's JVM-local lock while the backend was unreachable: it holds the
 * local permit and nothing on the backend. {@link #isDegraded()} is true and the fencing token is
 * {@link Lease#NO_FENCING_TOKEN}. HELD until released; a fixed lease becomes LOST after its lease time
 * (freeing the permit), a watched one never expires on its own. Never UNCERTAIN: there is nothing remote
 * to be unsure about.
 */
final class DegradedLease extends LocalLease {
  private static final Logger log = LoggerFactory.getLogger(DegradedLease.class);

  private final long grantedAt;
  private final AtomicReference<LeaseState> state = new AtomicReference<>(LeaseState.HELD);
  private final List<LeaseListener> listeners = new CopyOnWriteArrayList<>();
  private final ScheduledFuture<?> expiry;

  DegradedLease(DegradableLock lock, Permit permit) {
    super(lock, permit);
    this.grantedAt = lock.client().ticker().nanoTime();
    this.expiry = lock.options().watched() ? null
        : lock.client().schedule(this::expire, lock.options().leaseTime().toNanos());
  }

  private void expire() {
    if (state.compareAndSet(LeaseState.HELD, LeaseState.LOST)) {
      freePermit(); // before the listeners hear of it: the lock is free by then
      tell(LeaseState.HELD, LeaseState.LOST);
      log.warn("degraded (JVM-local) lease of lock '{}' ended after its fixed lease time of {}", lockName(),
          lock.options().leaseTime());
    }
  }

  @Override
  void endOnClose() {
    if (move(LeaseState.HELD, LeaseState.RELEASED)) {
      cancelExpiry();
    }
    freePermit();
  }

  private void cancelExpiry() {
    if (expiry != null) {
      expiry.cancel(false);
    }
  }

  /** Moves {@code from → to} atomically; tells the listeners on the client's event thread. */
  private boolean move(LeaseState from, LeaseState to) {
    if (!state.compareAndSet(from, to)) {
      return false;
    }
    tell(from, to);
    return true;
  }

  private void tell(LeaseState from, LeaseState to) {
    for (LeaseListener l : listeners) {
      lock.client().fire(() -> l.stateChanged(this, from, to));
    }
  }

  @Override
  public String lockName() {
    return lock.name();
  }

  @Override
  public long fencingToken() {
    return NO_FENCING_TOKEN;
  }

  @Override
  public boolean isDegraded() {
    return true;
  }

  @Override
  public LeaseState state() {
    return state.get();
  }

  @Override
  public Duration remainingValidity() {
    if (state.get().isFinal()) {
      return Duration.ZERO;
    }
    Duration lease = lock.options().leaseTime();
    if (lock.options().watched()) {
      return lease; // kept locally for as long as it is held, as a renewed lease would be
    }
    Duration left = lease.minusNanos(lock.client().ticker().nanoTime() - grantedAt);
    return left.isNegative() ? Duration.ZERO : left;
  }

  @Override
  public int holdCount() {
    return state.get().isFinal() ? 0 : holds.get();
  }

  @Override
  public Lease checkHeld() {
    LeaseState s = state.get();
    if (s != LeaseState.HELD) {
      throw new LeaseLostException(lockName(), "state is " + s);
    }
    return this;
  }

  @Override
  public boolean release() {
    if (!state.compareAndSet(LeaseState.HELD, LeaseState.RELEASED)) {
      return false;
    }
    cancelExpiry();
    freePermit();
    tell(LeaseState.HELD, LeaseState.RELEASED);
    return true;
  }

  /** The JVM-local lock stays taken for the delay (while the client is open: its close frees it). */
  @Override
  public boolean releaseAfter(Duration delay) {
    if (DefaultLease.releaseDelayMillis(delay) == 0) {
      return release();
    }
    if (!state.compareAndSet(LeaseState.HELD, LeaseState.RELEASED)) {
      return false;
    }
    cancelExpiry();
    lock.client().schedule(this::freePermit, delay.toNanos());
    tell(LeaseState.HELD, LeaseState.RELEASED);
    return true;
  }

  @Override
  public CompletionStage<Boolean> releaseAsync() {
    boolean held = release();
    CompletableFuture<Boolean> out = new CompletableFuture<>();
    lock.client().completions().execute(() -> out.complete(held));
    return out;
  }

  @Override
  public void close() {
    if (!release() && state.get() == LeaseState.LOST) {
      log.debug("degraded lease of lock '{}' had ended with its fixed lease time before close", lockName());
    }
  }

  @Override
  public Lease addListener(LeaseListener listener) {
    listeners.add(Objects.requireNonNull(listener, "listener"));
    return this;
  }

  @Override
  public Lease onLost(Runnable action) {
    Objects.requireNonNull(action, "action");
    java.util.concurrent.atomic.AtomicBoolean ran = new java.util.concurrent.atomic.AtomicBoolean();
    Runnable once = () -> {
      if (ran.compareAndSet(false, true)) {
        action.run();
      }
    };
    listeners.add((lease, from, to) -> {
      if (to == LeaseState.LOST) {
        once.run();
      }
    });
    if (state.get() == LeaseState.LOST) { // lost before the listener was in place
      lock.client().fire(once);
    }
    return this;
  }

  @Override
  public String toString() {
    return "Lease[" + lockName() + ", DEGRADED (JVM-local, no fencing token), " + state() + "]";
  }
}
