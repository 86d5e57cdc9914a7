package io.locksmith;

import java.time.Duration;
import java.util.Objects;

/**
 * How a lock's leases are kept: <em>watched</em> (the default: a lease of {@link #leaseTime()} renewed
 * every third of it for as long as the holder holds it) or <em>fixed</em> (the lease simply expires
 * after {@link #leaseTime()}; nothing renews it). Immutable and thread-safe.
 *
 * <p>A watched lease bounds how long a crashed holder blocks others (one lease time) without bounding
 * how long a live holder may work. A fixed lease bounds both, which suits jobs that must never run
 * longer than a known time.
 */
public final class LockOptions {
  /** The default watched lease time, 30 seconds. */
  public static final Duration DEFAULT_LEASE_TIME = Duration.ofSeconds(30);
  /** The shortest lease accepted, 10 ms: shorter leases cannot survive one network round trip. */
  public static final Duration MIN_LEASE_TIME = Duration.ofMillis(10);
  /**
   * The shortest watched lease accepted, 100 ms. A watched lease is renewed every third of it and is
   * lost when a renewal has not answered within the rest of its validity, so a renewal round trip
   * (scheduling included) has about two thirds of the lease: some 65 ms here. Leases of 10–15 ms left
   * 5 ms and were lost within a second. Keep watched leases well above the backend's command timeout
   * where the network is not local; this floor only rejects leases that cannot be renewed at all.
   */
  public static final Duration MIN_WATCHED_LEASE_TIME = Duration.ofMillis(100);
  /**
   * The longest lease accepted, 7 days. A lease is how long a crashed holder keeps everyone else out;
   * longer than any plan to notice and recover. Work that may run longer uses a watched lease, which
   * stays short however long it is held. (The bound also keeps every lease within what nanoseconds and
   * Redis expiry times in a {@code long} can hold.)
   */
  public static final Duration MAX_LEASE_TIME = Duration.ofDays(7);

  private static final LockOptions DEFAULTS = new Builder().build();

  private final Duration leaseTime;
  private final boolean watched;
  private final DegradationPolicy degradation;

  private LockOptions(Builder b) {
    this.leaseTime = b.leaseTime;
    this.watched = b.watched;
    this.degradation = b.degradation;
  }

  /** @return watched leases of {@link #DEFAULT_LEASE_TIME} */
  public static LockOptions defaults() {
    return DEFAULTS;
  }

  /**
   * @param leaseTime the lease, renewed every third of it while held
   * @return options for watched leases
   * @throws NullPointerException if {@code leaseTime} is null
   * @throws IllegalArgumentException if {@code leaseTime} is shorter than {@link #MIN_WATCHED_LEASE_TIME}
   *     or longer than {@link #MAX_LEASE_TIME}
   */
  public static LockOptions watched(Duration leaseTime) {
    return builder().watchedLease(leaseTime).build();
  }

  /**
   * @param leaseTime the lease after which the lock expires unless released before
   * @return options for fixed leases
   * @throws NullPointerException if {@code leaseTime} is null
   * @throws IllegalArgumentException if {@code leaseTime} is shorter than {@link #MIN_LEASE_TIME} or
   *     longer than {@link #MAX_LEASE_TIME}
   */
  public static LockOptions fixed(Duration leaseTime) {
    return builder().fixedLease(leaseTime).build();
  }

  /** @return a builder starting from the defaults */
  public static Builder builder() {
    return new Builder();
  }

  /** @return a builder starting from these options */
  public Builder mutate() {
    Builder b = new Builder();
    b.leaseTime = leaseTime;
    b.watched = watched;
    b.degradation = degradation;
    return b;
  }

  /** @return the lease time */
  public Duration leaseTime() {
    return leaseTime;
  }

  /** @return whether leases are renewed while held */
  public boolean watched() {
    return watched;
  }

  /**
   * @return the degradation policy of an efficiency lock (fall back to a JVM-local lock while the
   *     backend is unreachable), or empty: fail closed, the default. Only exclusive locks honour it; see
   *     {@link DegradationPolicy}
   */
  public java.util.Optional<DegradationPolicy> degradation() {
    return java.util.Optional.ofNullable(degradation);
  }

  /** @return the renewal period of a watched lease: a third of the lease time */
  public Duration renewalInterval() {
    return leaseTime.dividedBy(3);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof LockOptions other && other.leaseTime.equals(leaseTime) && other.watched == watched
        && other.degradation == degradation;
  }

  @Override
  public int hashCode() {
    return Objects.hash(leaseTime, watched, degradation);
  }

  @Override
  public String toString() {
    return (watched ? "watched " : "fixed ") + leaseTime + (degradation == null ? "" : ", " + degradation);
  }

  /** Builds {@link LockOptions}; not thread-safe. */
  public static final class Builder {
    private Duration leaseTime = DEFAULT_LEASE_TIME;
    private boolean watched = true;
    private DegradationPolicy degradation;

    private Builder() {}

    /**
     * Makes the lock an <em>efficiency</em> lock that falls back to a JVM-local lock while the backend
     * is unreachable, saying so in its leases ({@link Lease#isDegraded()}), the log and the policy's
     * listener. Only for locks whose rare overlap is harmless; see {@link DegradationPolicy}. Honoured by
     * exclusive locks only; other kinds fail closed whatever this says.
     *
     * @param policy the policy, or {@code null} to fail closed (the default)
     * @return this builder
     */
    public Builder degradation(DegradationPolicy policy) {
      this.degradation = policy;
      return this;
    }

    /**
     * @param leaseTime lease renewed every third of it while held, {@link #MIN_WATCHED_LEASE_TIME} to
     *     {@link #MAX_LEASE_TIME}; checked by {@link #build()}
     * @return this builder
     */
    public Builder watchedLease(Duration leaseTime) {
      this.leaseTime = leaseTime;
      this.watched = true;
      return this;
    }

    /**
     * @param leaseTime lease that expires unless released before, {@link #MIN_LEASE_TIME} to
     *     {@link #MAX_LEASE_TIME}; checked by {@link #build()}
     * @return this builder
     */
    public Builder fixedLease(Duration leaseTime) {
      this.leaseTime = leaseTime;
      this.watched = false;
      return this;
    }

    /**
     * @return the options
     * @throws NullPointerException if the lease time is null
     * @throws IllegalArgumentException if the lease time is shorter than {@link #MIN_LEASE_TIME}
     *     ({@link #MIN_WATCHED_LEASE_TIME} for a watched lease) or longer than {@link #MAX_LEASE_TIME}
     */
    public LockOptions build() {
      Objects.requireNonNull(leaseTime, "leaseTime");
      if (leaseTime.compareTo(MIN_LEASE_TIME) < 0) {
        throw new IllegalArgumentException(
            "leaseTime must be at least " + MIN_LEASE_TIME.toMillis() + " ms, was " + leaseTime);
      }
      if (watched && leaseTime.compareTo(MIN_WATCHED_LEASE_TIME) < 0) {
        throw new IllegalArgumentException("a watched lease must be at least "
            + MIN_WATCHED_LEASE_TIME.toMillis() + " ms to be renewed in time (it is renewed every third of"
            + " it), was " + leaseTime + "; use a longer lease, or a fixed one");
      }
      if (leaseTime.compareTo(MAX_LEASE_TIME) > 0) {
        throw new IllegalArgumentException("leaseTime must be at most " + MAX_LEASE_TIME.toDays()
            + " days, was " + leaseTime + "; for long work use a watched lease, which is renewed while held");
      }
      return new LockOptions(this);
    }
  }
}
