package io.locksmith;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Ownership of all the locks of a {@link MultiLock}: one {@link Lease} per name, held together and
 * released together. Like a lease it is not bound to a thread.
 *
 * <p><b>State.</b> {@link #state()} is the weakest of the members': {@link LeaseState#LOST} as soon as
 * one member is lost (or was released on its own through {@link #lease(String)}), since the names are no
 * longer all held; else {@link LeaseState#UNCERTAIN} if one member is; else {@link LeaseState#HELD}.
 * After {@link #release()} or {@link #close()} it is {@link LeaseState#RELEASED}. {@link #onLost} fires
 * once, when the first member is lost.
 *
 * <p><b>Fencing.</b> Each member has its own token ({@link #fencingTokens()}); tokens of different names
 * are not comparable. Fence each resource with the token of the name that protects it.
 *
 * <p><b>Thread-safety.</b> All methods are thread-safe; {@link #release()} and {@link #close()} are
 * idempotent (the first of them releases, later calls do nothing).
 */
public final class MultiLease implements AutoCloseable {
  private final List<Lease> leases;
  private final Map<String, Lease> byName;
  private final AtomicBoolean released = new AtomicBoolean();

  MultiLease(List<Lease> leases) {
    this.leases = List.copyOf(leases);
    Map<String, Lease> map = new LinkedHashMap<>();
    for (Lease lease : this.leases) {
      map.put(lease.lockName(), lease);
    }
    this.byName = Collections.unmodifiableMap(map);
  }

  /** @return the lock names, in the order they were acquired (ascending) */
  public List<String> names() {
    return List.copyOf(byName.keySet());
  }

  /** @return the members' leases, in the order of {@link #names()} */
  public List<Lease> leases() {
    return leases;
  }

  /**
   * @param name one of {@link #names()}
   * @return that member's lease
   * @throws NullPointerException if {@code name} is null
   * @throws IllegalArgumentException if {@code name} is not a member
   */
  public Lease lease(String name) {
    Objects.requireNonNull(name, "name");
    Lease lease = byName.get(name);
    if (lease == null) {
      throw new IllegalArgumentException("'" + name + "' is not one of " + byName.keySet());
    }
    return lease;
  }

  /**
   * @param name one of {@link #names()}
   * @return the fencing token of that member
   * @throws NullPointerException if {@code name} is null
   * @throws IllegalArgumentException if {@code name} is not a member
   */
  public long fencingToken(String name) {
    return lease(name).fencingToken();
  }

  /** @return every member's fencing token by lock name, in the order of {@link #names()}; unmodifiable */
  public Map<String, Long> fencingTokens() {
    Map<String, Long> tokens = new LinkedHashMap<>();
    for (Lease lease : leases) {
      tokens.put(lease.lockName(), lease.fencingToken());
    }
    return Collections.unmodifiableMap(tokens);
  }

  /** @return the weakest state of the members (see the class comment) */
  public LeaseState state() {
    if (released.get()) {
      return LeaseState.RELEASED;
    }
    boolean uncertain = false;
    for (Lease lease : leases) {
      LeaseState s = lease.state();
      if (s.isFinal()) {
        return LeaseState.LOST;
      }
      uncertain |= s == LeaseState.UNCERTAIN;
    }
    return uncertain ? LeaseState.UNCERTAIN : LeaseState.HELD;
  }

  /** @return {@code true} while every member is {@link LeaseState#HELD} */
  public boolean isHeld() {
    return state() == LeaseState.HELD;
  }

  /**
   * @return whether any member is a degraded, JVM-local lease ({@link Lease#isDegraded()}: the lock's
   *     options carry a {@link DegradationPolicy} and the backend was unreachable); such a multi-lease
   *     excludes only within this JVM, and that member's token is refused by every fence
   */
  public boolean isDegraded() {
    for (Lease lease : leases) {
      if (lease.isDegraded()) {
        return true;
      }
    }
    return false;
  }

  /** @return the shortest remaining validity of the members, {@link Duration#ZERO} once one is gone */
  public Duration remainingValidity() {
    Duration min = null;
    for (Lease lease : leases) {
      Duration d = lease.remainingValidity();
      min = min == null || d.compareTo(min) < 0 ? d : min;
    }
    return released.get() ? Duration.ZERO : min;
  }

  /**
   * Throws unless every member is {@link LeaseState#HELD}; see {@link Lease#checkHeld()}.
   *
   * @return this multi-lease
   * @throws LeaseLostException naming the first member (in name order) that is not held, or the first
   *     member if this multi-lease was released
   */
  public MultiLease checkHeld() {
    if (released.get()) {
      throw new LeaseLostException(leases.get(0).lockName(), "the multi-lease was released");
    }
    for (Lease lease : leases) {
      lease.checkHeld();
    }
    return this;
  }

  /**
   * Releases every member, in reverse name order, each with {@link Lease#release()}; a member that cannot
   * be reached does not stop the others from being released.
   *
   * @return {@code true} if every member still held its lock up to this release; {@code false} if one
   *     had been lost (the work done under this multi-lease may have overlapped with another holder of
   *     that name) or this multi-lease was released already
   * @throws BackendUnavailableException if a member's release could not reach the backend (the first such
   *     failure, the others suppressed in it); every member is released locally all the same, and the
   *     server lets the unreached ones expire with their leases
   */
  public boolean release() {
    if (!released.compareAndSet(false, true)) {
      return false;
    }
    boolean all = true;
    RuntimeException failure = null;
    for (int i = leases.size() - 1; i >= 0; i--) {
      try {
        all &= leases.get(i).release();
      } catch (RuntimeException e) {
        all = false;
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
    return all;
  }

  /**
   * Releases every member with {@link Lease#close()}, without throwing (a lost member or a failed release
   * is logged at WARN by the member); does nothing after {@link #release()}.
   */
  @Override
  public void close() {
    if (!released.compareAndSet(false, true)) {
      return;
    }
    for (int i = leases.size() - 1; i >= 0; i--) {
      leases.get(i).close();
    }
  }

  /**
   * Runs {@code action} once, when the first member becomes {@link LeaseState#LOST} (at once if one
   * already is). It does not run for members lost after this multi-lease was released.
   *
   * @param action called on the client's event thread
   * @return this multi-lease
   * @throws NullPointerException if {@code action} is null
   */
  public MultiLease onLost(Runnable action) {
    Objects.requireNonNull(action, "action");
    AtomicBoolean fired = new AtomicBoolean();
    for (Lease lease : leases) {
      lease.onLost(() -> {
        if (!released.get() && fired.compareAndSet(false, true)) {
          action.run();
        }
      });
    }
    return this;
  }

  @Override
  public String toString() {
    List<String> parts = new ArrayList<>();
    for (Lease lease : leases) {
      parts.add(lease.lockName() + "#" + lease.fencingToken());
    }
    return "MultiLease" + parts + " " + state();
  }
}
