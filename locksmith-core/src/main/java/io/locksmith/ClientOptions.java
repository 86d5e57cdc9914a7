package io.locksmith;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.regex.Pattern;

/**
 * Options every backend's client shares: the namespace its keys live under, name limits, the default
 * lease policy, the clock-drift and scheduling allowances, the clock itself and an optional client name.
 * Immutable and thread-safe; build with {@link #builder()}, derive with {@link #mutate()}.
 *
 * <p><b>Validity.</b> A lease is valid, for its holder, until {@code sentAt + lease − margin}, where
 * {@code sentAt} is when the request that granted or renewed it was sent and the margin is
 * {@link #validityMarginFor(Duration)}: the {@linkplain Builder#clockDrift clock-drift allowance} plus the
 * {@linkplain Builder#schedulingAllowance scheduling allowance}. Every backend's leases end there (the
 * ZooKeeper backend applies the same margin to its session timeout), so the holder is told its lease
 * is lost before the server can give the lock to someone else.
 */
public final class ClientOptions {
  /** Default namespace prefix. */
  public static final String DEFAULT_NAMESPACE = "locksmith";
  /** Default upper bound on a lock name's length, in Unicode code points. */
  public static final int DEFAULT_MAX_NAME_LENGTH = 512;
  /**
   * Default {@linkplain Builder#schedulingAllowance scheduling allowance}: 50 ms. Chosen from measurement
   * (docs/safety.md, "Telling the holder first"): with 500 ms leases, the holder's link blackholed and a
   * CPU-bound busy loop beside three client JVMs on a loaded two-core host, the holder's {@code onLost}
   * ran up to 45 ms after another client was granted with the clock-drift allowance alone (3 of 38
   * trials late); with 50 ms, first in 77 of 78 trials (one 41 ms late, the host at load average 20).
   * Hosts that run that hot or hotter need more (the same page).
   */
  public static final Duration DEFAULT_SCHEDULING_ALLOWANCE = Duration.ofMillis(50);

  private static final Pattern NAMESPACE = Pattern.compile("[A-Za-z0-9._\\-]{1,64}");
  /** Printable ASCII without space: what Redis accepts as a connection name, and safe in an owner id. */
  private static final Pattern CLIENT_NAME = Pattern.compile("[\\x21-\\x7E]{1,64}");
  private static final ClientOptions DEFAULTS = new Builder().build();

  private final String namespace;
  private final int maxNameLength;
  private final LockOptions defaultLockOptions;
  private final double driftFactor;
  private final Duration driftFloor;
  private final Duration schedulingAllowance;
  private final Ticker ticker;
  private final String clientName;
  private final Executor completionExecutor;
  private final boolean leakDetection;
  private final boolean acquisitionSites;
  private final LockObserver observer;

  private ClientOptions(Builder b) {
    this.namespace = b.namespace;
    this.maxNameLength = b.maxNameLength;
    this.defaultLockOptions = b.defaultLockOptions;
    this.driftFactor = b.driftFactor;
    this.driftFloor = b.driftFloor;
    this.schedulingAllowance = b.schedulingAllowance;
    this.ticker = b.ticker;
    this.clientName = b.clientName;
    this.completionExecutor = b.completionExecutor;
    this.leakDetection = b.leakDetection;
    this.acquisitionSites = b.acquisitionSites;
    this.observer = b.observer;
  }

  /** @return the defaults */
  public static ClientOptions defaults() {
    return DEFAULTS;
  }

  /** @return a builder starting from the defaults */
  public static Builder builder() {
    return new Builder();
  }

  /** @return a builder starting from these options */
  public Builder mutate() {
    Builder b = new Builder();
    b.namespace = namespace;
    b.maxNameLength = maxNameLength;
    b.defaultLockOptions = defaultLockOptions;
    b.driftFactor = driftFactor;
    b.driftFloor = driftFloor;
    b.schedulingAllowance = schedulingAllowance;
    b.ticker = ticker;
    b.clientName = clientName;
    b.completionExecutor = completionExecutor;
    b.leakDetection = leakDetection;
    b.acquisitionSites = acquisitionSites;
    b.observer = observer;
    return b;
  }

  /** @return the prefix of every key or path this client creates */
  public String namespace() {
    return namespace;
  }

  /** @return the longest lock name accepted, in Unicode code points */
  public int maxNameLength() {
    return maxNameLength;
  }

  /** @return lease policy of {@link LockClient#lock(String)} */
  public LockOptions defaultLockOptions() {
    return defaultLockOptions;
  }

  /** @return the monotonic clock used for validity */
  public Ticker ticker() {
    return ticker;
  }

  /**
   * @return the name this client gives itself, e.g. host and process, if one was set; see {@link
   *     Builder#clientName(String)}
   */
  public Optional<String> clientName() {
    return Optional.ofNullable(clientName);
  }

  /**
   * @return the executor that completes the client's asynchronous results, if the application gave
   *     one; empty means the client uses a small pool of its own (see {@link
   *     Builder#completionExecutor(Executor)})
   */
  public Optional<Executor> completionExecutor() {
    return Optional.ofNullable(completionExecutor);
  }

  /** @return whether dropped leases and ended threads' holds are detected, reported and released */
  public boolean leakDetection() {
    return leakDetection;
  }

  /**
   * @return whether every acquisition records its caller's stack from the start, rather than only once the
   *     client has found a first leak; see {@link Builder#acquisitionSites(boolean)}
   */
  public boolean acquisitionSites() {
    return acquisitionSites;
  }

  /** @return the observer told of acquisitions and lease state changes, if one is set */
  public Optional<LockObserver> observer() {
    return Optional.ofNullable(observer);
  }

  /**
   * The part of a lease subtracted from its validity to allow for the server's clock running faster
   * than ours: {@code leaseTime × driftFactor + driftFloor} (the Redlock reference values are 0.01 and
   * 2 ms, the defaults).
   *
   * @param leaseTime a lease time
   * @return the drift allowance for it
   */
  public Duration driftFor(Duration leaseTime) {
    return Duration.ofNanos((long) (leaseTime.toNanos() * driftFactor)).plus(driftFloor);
  }

  /**
   * @return the part of every lease set aside for the holder's own scheduling: see {@link
   *     Builder#schedulingAllowance(Duration)}
   */
  public Duration schedulingAllowance() {
    return schedulingAllowance;
  }

  /**
   * The part of a lease its holder does not count on: the {@linkplain #driftFor clock-drift allowance}
   * plus the {@linkplain #schedulingAllowance() scheduling allowance}. A lease is valid until {@code
   * sentAt + leaseTime − validityMarginFor(leaseTime)}; this is the one place that margin is computed,
   * for every backend.
   *
   * @param leaseTime a lease time (for ZooKeeper, the session timeout)
   * @return the margin for it
   */
  public Duration validityMarginFor(Duration leaseTime) {
    return driftFor(leaseTime).plus(schedulingAllowance);
  }

  @Override
  public String toString() {
    return "ClientOptions{namespace=" + namespace + ", maxNameLength=" + maxNameLength + ", lock="
        + defaultLockOptions + ", drift=" + driftFactor + "+" + driftFloor + ", schedulingAllowance="
        + schedulingAllowance
        + (clientName != null ? ", clientName=" + clientName : "") + "}";
  }

  /** Builds {@link ClientOptions}; not thread-safe. Everything is validated by {@link #build()}. */
  public static final class Builder {
    private String namespace = DEFAULT_NAMESPACE;
    private int maxNameLength = DEFAULT_MAX_NAME_LENGTH;
    private LockOptions defaultLockOptions = LockOptions.defaults();
    private double driftFactor = 0.01;
    private Duration driftFloor = Duration.ofMillis(2);
    private Duration schedulingAllowance = DEFAULT_SCHEDULING_ALLOWANCE;
    private Ticker ticker = Ticker.system();
    private String clientName;
    private Executor completionExecutor;
    private boolean leakDetection = true;
    private boolean acquisitionSites;
    private LockObserver observer;

    private Builder() {}

    /**
     * @param namespace 1–64 characters of {@code [A-Za-z0-9._-]}; keeps several applications apart on
     *     one server
     * @return this builder
     */
    public Builder namespace(String namespace) {
      this.namespace = namespace;
      return this;
    }

    /**
     * @param maxNameLength longest lock name accepted, in Unicode code points (a character outside the
     *     Basic Multilingual Plane counts once), 1–65536
     * @return this builder
     */
    public Builder maxNameLength(int maxNameLength) {
      this.maxNameLength = maxNameLength;
      return this;
    }

    /**
     * @param options lease policy of {@link LockClient#lock(String)}
     * @return this builder
     */
    public Builder defaultLockOptions(LockOptions options) {
      this.defaultLockOptions = options;
      return this;
    }

    /**
     * @param factor fraction of each lease assumed lost to clock drift, in [0, 0.5)
     * @param floor fixed drift allowance added to it, not negative, less than half of the default lease
     * @return this builder
     */
    public Builder clockDrift(double factor, Duration floor) {
      this.driftFactor = factor;
      this.driftFloor = floor;
      return this;
    }

    /**
     * Time set aside from every lease for the holder's own scheduling: the client's timer thread that
     * ends the lease's validity and the thread that runs its listeners can each be late on a loaded host
     * (a busy CPU, a garbage-collection pause short of a stall), and {@code onLost} must still run before
     * the server can grant the lock to another client. The clock-drift allowance does not cover this: it
     * is spent on clocks, and for short leases it is a few milliseconds (500 ms leases: 7 ms).
     *
     * <p>The allowance is subtracted from each lease's validity (and from ZooKeeper's session timeout)
     * on top of the clock-drift allowance, see {@link ClientOptions#validityMarginFor(Duration)}. It
     * costs each lease that much of its validity and nothing else. Default {@link
     * #DEFAULT_SCHEDULING_ALLOWANCE} (50 ms), chosen from measurement on a loaded 2-core host (docs/safety.md).
     * Raise it for hosts with longer stalls; {@code Duration.ZERO} restores the drift allowance alone.
     *
     * @param allowance not negative; with the drift allowance, less than half of the default lease (a lock
     *     whose lease is not longer than both together is refused when it is created)
     * @return this builder
     */
    public Builder schedulingAllowance(Duration allowance) {
      this.schedulingAllowance = allowance;
      return this;
    }

    /**
     * @param ticker monotonic clock for validity; inject a manual one in tests
     * @return this builder
     */
    public Builder ticker(Ticker ticker) {
      this.ticker = ticker;
      return this;
    }

    /**
     * Names this client for operators, e.g. {@code "billing-7/4711"} (host and process id). The name
     * follows the client id in every owner id the client writes ({@code <clientId>:<seq>@<name>}, shown
     * by {@code inspect}), and a backend that can name its connections does so (Redis: {@code CLIENT
     * SETNAME}, visible in {@code CLIENT LIST}). Without a name (the default) owner ids are
     * {@code <clientId>:<seq>}. Names need not be unique; the client id still tells clients apart.
     *
     * @param clientName 1–64 printable ASCII characters without spaces, or {@code null} for none
     * @return this builder
     */
    public Builder clientName(String clientName) {
      this.clientName = clientName;
      return this;
    }

    /**
     * Where the client completes what it hands to asynchronous code: the stages of {@code acquireAsync},
     * {@code tryAcquireAsync} and {@code releaseAsync}, and so every dependent stage added to them
     * without an executor. Results are never completed on a backend I/O thread, whose stall would stall
     * every lock of the client, nor on the common {@code ForkJoinPool} (with one or two CPUs its
     * parallelism is 1 and {@code CompletableFuture} then starts a new thread for every task).
     *
     * <p>Without one (the default) the client owns a pool of at most 4 daemon threads named {@code
     * locksmith-async-<clientId>-<n>}, started on demand, ended after 30 s idle and at {@code close()}.
     * Give your own to run dependent stages where the rest of the application's asynchronous work runs
     * (a virtual-thread executor, a framework's pool); the client never shuts it down. If it rejects a
     * task (for instance because it was shut down), the result is completed on the thread at hand
     * instead, which may be a backend I/O thread, and a WARN says so once.
     *
     * @param executor the executor, or {@code null} for the client's own pool
     * @return this builder
     */
    public Builder completionExecutor(Executor executor) {
      this.completionExecutor = executor;
      return this;
    }

    /**
     * Leak detection, on by default:
     *
     * <ul>
     *   <li>a lease-view lease that became unreachable while still held: found after garbage collection,
     *       logged at WARN and released;
     *   <li>a Lock-view hold whose thread ended without unlocking it (checked always, at the hold's
     *       renewal): logged at WARN and released.
     * </ul>
     *
     * <p>Where such a lease was acquired (the caller's stack) is in the WARN once the client records
     * acquisition stacks: from its first leak on, or from the start with {@link #acquisitionSites(boolean)}.
     *
     * <p>With {@code false}, dropped leases are not tracked at all (they stay held and renewed until the
     * client closes) and ended threads are reported without the stack.
     *
     * @param enabled whether to detect dropped leases and record acquisition stacks
     * @return this builder
     */
    public Builder leakDetection(boolean enabled) {
      this.leakDetection = enabled;
      return this;
    }

    /**
     * Whether every acquisition records its caller's stack from the start, so that even the first leak the
     * client finds ({@link #leakDetection(boolean)}) is reported with where it was acquired. Off by default:
     * the client then records stacks only from its first leak on (that WARN says the stack was not
     * recorded; later ones carry it), because recording one is the JVM walking the caller's stack on every
     * acquisition: measured 5–14 µs at 15 frames on two loaded cores (2.5 µs at 40 frames on a quiet
     * one), against 35 µs of the calling thread's CPU per lock cycle of a plain {@code SET NX} lock. Turn
     * it on while hunting a leak, or where acquisitions are rare. No effect with leak detection off.
     *
     * @param always record from the start ({@code true}) or from the first leak on ({@code false})
     * @return this builder
     */
    public Builder acquisitionSites(boolean always) {
      this.acquisitionSites = always;
      return this;
    }

    /**
     * An observer told of every acquisition's outcome and every lease state change, for metrics. None by
     * default, and then nothing is reported and nothing is measured.
     *
     * @param observer the observer, or {@code null} for none
     * @return this builder
     */
    public Builder observer(LockObserver observer) {
      this.observer = observer;
      return this;
    }

    /**
     * @return the options
     * @throws NullPointerException if a reference option is null
     * @throws IllegalArgumentException if a value is out of range, with the reason
     */
    public ClientOptions build() {
      Objects.requireNonNull(namespace, "namespace");
      Objects.requireNonNull(defaultLockOptions, "defaultLockOptions");
      Objects.requireNonNull(driftFloor, "clockDrift floor");
      Objects.requireNonNull(schedulingAllowance, "schedulingAllowance");
      Objects.requireNonNull(ticker, "ticker");
      if (!NAMESPACE.matcher(namespace).matches()) {
        throw new IllegalArgumentException(
            "namespace must be 1-64 characters of [A-Za-z0-9._-], was '" + namespace + "'");
      }
      if (clientName != null && !CLIENT_NAME.matcher(clientName).matches()) {
        throw new IllegalArgumentException("clientName must be 1-64 printable ASCII characters without spaces,"
            + " was '" + clientName.replaceAll("\\p{Cntrl}", "?") + "'");
      }
      if (maxNameLength < 1 || maxNameLength > 65536) {
        throw new IllegalArgumentException("maxNameLength must be in 1..65536, was " + maxNameLength);
      }
      if (!(driftFactor >= 0 && driftFactor < 0.5)) {
        throw new IllegalArgumentException("clockDrift factor must be in [0, 0.5), was " + driftFactor);
      }
      if (driftFloor.isNegative() || driftFloor.compareTo(LockOptions.MAX_LEASE_TIME) > 0) {
        // bounded here so that driftFor() cannot overflow; the check below narrows it to the lease
        throw new IllegalArgumentException("clockDrift floor must be from 0 to at most "
            + LockOptions.MAX_LEASE_TIME.toDays() + " days, was " + driftFloor);
      }
      if (schedulingAllowance.isNegative() || schedulingAllowance.compareTo(LockOptions.MAX_LEASE_TIME) > 0) {
        // bounded so that validityMarginFor() cannot overflow; the check below narrows it to the lease
        throw new IllegalArgumentException("schedulingAllowance must be from 0 to at most "
            + LockOptions.MAX_LEASE_TIME.toDays() + " days, was " + schedulingAllowance);
      }
      Duration lease = defaultLockOptions.leaseTime();
      ClientOptions built = new ClientOptions(this);
      if (built.driftFor(lease).compareTo(lease.dividedBy(2)) >= 0) {
        throw new IllegalArgumentException(
            "clock drift allowance leaves less than half of the default lease " + lease);
      }
      if (built.validityMarginFor(lease).compareTo(lease.dividedBy(2)) >= 0) {
        throw new IllegalArgumentException("clock drift allowance " + built.driftFor(lease)
            + " plus schedulingAllowance " + schedulingAllowance + " leave less than half of the default lease "
            + lease);
      }
      return built;
    }
  }
}
