package io.locksmith;

import java.time.Duration;
import java.util.Objects;

/**
 * An opt-in policy for <em>efficiency</em> locks: while the backend cannot be reached, grant a
 * JVM-local lock instead of failing. Set it per lock with {@link LockOptions.Builder#degradation}, or
 * for every exclusive lock of a client through {@link ClientOptions.Builder#defaultLockOptions}. Without
 * a policy (the default) a lock fails closed: an unreachable backend is
 * {@link BackendUnavailableException}, never a grant.
 *
 * <p><b>Only for locks whose overlap is harmless.</b> A degraded lease excludes holders in this JVM
 * only; other processes may hold the same lock at the same time, each with its own local lock. Use it
 * where a rare duplicate run costs some wasted work (a report recomputed, a cache warmed twice), never
 * where overlap corrupts data (stock, balances, anything fenced): a degraded lease carries
 * {@link Lease#NO_FENCING_TOKEN}, which every fence refuses, precisely so that it cannot pass for a
 * correctness lock. See {@code docs/recipes.md}.
 *
 * <p><b>When an acquisition degrades.</b> Every acquisition of a lock with this policy first takes the
 * lock's JVM-local lock (one per namespace and name in the JVM, shared by every client), waiting for it
 * within the caller's wait, so a degraded holder and a holder on the backend in the same JVM never
 * overlap, also when the backend returns. It then asks the backend: for at most {@link #grace()} at
 * first (zero, the default: a single attempt), then, while the lock is held by others, in slices of
 * {@code max(grace, 1 s)} for the rest of the wait. When such a step ends in
 * {@link BackendUnavailableException} (its last attempt could not reach the backend or timed out), the
 * acquisition is granted the local lock it already holds: a degraded lease. So with the default grace
 * an acquisition degrades after one failed attempt (at once when the connection is down; after the
 * command timeout when the server hangs), and a waiting one within about a second of an outage that
 * starts while it waits. A call that gets nothing from the backend and no outage times out as usual.
 * Configuration errors ({@link BackendConfigurationException}) and a closed client never degrade.
 *
 * <p><b>Never silently.</b> Each degraded grant is counted by the {@link #listener()} (a metrics hook;
 * see {@link DegradationCounter}) and marked on the lease ({@link Lease#isDegraded()}); the first one of a
 * lock is logged at WARN (the next ones at DEBUG), and the lock's next grant by the backend is logged at
 * INFO and reported as {@link DegradationListener#restored}. Each acquisition asks the backend first,
 * so once it answers again, new acquisitions use it.
 *
 * <p><b>Degraded leases</b> are {@link LeaseState#HELD} until released; a fixed lease still ends after
 * its lease time ({@link LeaseState#LOST}, freeing the local lock), a watched one lasts until released.
 * They are never {@link LeaseState#UNCERTAIN}, and nothing is written to the backend for them, so a
 * backend holder elsewhere is not excluded. Closing the client ends them.
 *
 * <p>Honoured by exclusive locks ({@link LockClient#lock(String, LockOptions)}) and so by {@link MultiLock}s
 * of them; fair locks, read-write locks and semaphores always fail closed, whatever their options say:
 * their ordering and counting rules have no faithful local substitute.
 *
 * <p>Immutable and thread-safe; the listener is shared by every lock that uses the policy.
 */
public final class DegradationPolicy {
  /** The longest grace accepted, 1 hour. */
  public static final Duration MAX_GRACE = Duration.ofHours(1);
  private static final DegradationListener NONE = (lockName, cause) -> { };

  private final Duration grace;
  private final DegradationListener listener;

  private DegradationPolicy(Builder b) {
    this.grace = b.grace;
    this.listener = b.listener;
  }

  /** @return falling back to a JVM-local lock after one failed attempt, with no listener */
  public static DegradationPolicy localFallback() {
    return builder().build();
  }

  /** @return a builder of a local-fallback policy, starting from the defaults */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * @return how long an acquisition keeps asking an unreachable backend (riding the outage out, as a
   *     waiting acquisition without a policy does) before it degrades; zero means after one attempt
   */
  public Duration grace() {
    return grace;
  }

  /** @return the listener told of degraded grants and returns to the backend (none by default) */
  public DegradationListener listener() {
    return listener;
  }

  @Override
  public String toString() {
    return "DegradationPolicy[localFallback, grace=" + grace + "]";
  }

  /** Builds a {@link DegradationPolicy}; not thread-safe. Values are checked by {@link #build()}. */
  public static final class Builder {
    private Duration grace = Duration.ZERO;
    private DegradationListener listener = NONE;

    private Builder() {}

    /**
     * @param grace how long an acquisition rides out an outage before it degrades, 0 (the default: after
     *     one failed attempt) to {@link #MAX_GRACE}; an acquisition whose wait is shorter degrades when
     *     its wait runs out
     * @return this builder
     */
    public Builder grace(Duration grace) {
      this.grace = grace;
      return this;
    }

    /**
     * @param listener told of every degraded grant and return to the backend, e.g. a {@link
     *     DegradationCounter} or a metrics binding
     * @return this builder
     */
    public Builder listener(DegradationListener listener) {
      this.listener = listener;
      return this;
    }

    /**
     * @return the policy
     * @throws NullPointerException if the grace or the listener is null
     * @throws IllegalArgumentException if the grace is negative or longer than {@link #MAX_GRACE}
     */
    public DegradationPolicy build() {
      Objects.requireNonNull(grace, "grace");
      Objects.requireNonNull(listener, "listener");
      if (grace.isNegative() || grace.compareTo(MAX_GRACE) > 0) {
        throw new IllegalArgumentException("grace must be from 0 to " + MAX_GRACE + ", was " + grace);
      }
      return new DegradationPolicy(this);
    }
  }
}
