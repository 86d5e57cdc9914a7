package io.locksmith.check;

import java.time.Duration;
import java.util.Objects;

/**
 * What one run does: backend, fault, fenced or not, how many clients in how many child JVMs, how long.
 * Immutable and thread-safe; made with {@link #builder(CheckBackend, Fault)}, validated by
 * {@link Builder#build()}.
 *
 * <p>Defaults: the exclusive lock, 4 clients in 2 child JVMs (in-JVM backend: 4 harness threads), 2 lock names, 30 s,
 * watched leases of 2 s, think time 5–25 ms, acquisition wait 5 s, unfenced, no extra CPU load, the
 * clients' default scheduling allowance, and the run lasts its whole duration (no
 * {@linkplain Builder#stopEarly early end}).
 */
public final class CheckSettings {
  private final CheckBackend backend;
  private final Fault fault;
  private final boolean fenced;
  private final io.locksmith.LockKind kind;
  private final int clients;
  private final int processes;
  private final int locks;
  private final Duration duration;
  private final Duration lease;
  private final boolean watched;
  private final Duration thinkMin;
  private final Duration thinkMax;
  private final Duration acquireWait;
  private final int load;
  private final Duration schedulingAllowance;
  private final int stopAfterAcquisitions;
  private final int stopAfterInjections;

  private CheckSettings(Builder b) {
    this.backend = b.backend;
    this.fault = b.fault;
    this.fenced = b.fenced;
    this.kind = b.kind;
    this.clients = b.clients;
    this.processes = b.processes;
    this.locks = b.locks;
    this.duration = b.duration;
    this.lease = b.lease;
    this.watched = b.watched;
    this.thinkMin = b.thinkMin;
    this.thinkMax = b.thinkMax;
    this.acquireWait = b.acquireWait;
    this.load = b.load;
    this.schedulingAllowance = b.schedulingAllowance;
    this.stopAfterAcquisitions = b.stopAfterAcquisitions;
    this.stopAfterInjections = b.stopAfterInjections;
  }

  /**
   * @param backend what to check
   * @param fault what to inject
   * @return a builder with the defaults
   * @throws NullPointerException if an argument is null
   */
  public static Builder builder(CheckBackend backend, Fault fault) {
    return new Builder(Objects.requireNonNull(backend, "backend"), Objects.requireNonNull(fault, "fault"));
  }

  /** @return a builder starting from these settings */
  public Builder mutate() {
    Builder b = new Builder(backend, fault);
    b.fenced = fenced;
    b.kind = kind;
    b.clients = clients;
    b.processes = processes;
    b.locks = locks;
    b.duration = duration;
    b.lease = lease;
    b.watched = watched;
    b.thinkMin = thinkMin;
    b.thinkMax = thinkMax;
    b.acquireWait = acquireWait;
    b.load = load;
    b.schedulingAllowance = schedulingAllowance;
    b.stopAfterAcquisitions = stopAfterAcquisitions;
    b.stopAfterInjections = stopAfterInjections;
    return b;
  }

  /** @return the backend */
  public CheckBackend backend() {
    return backend;
  }

  /** @return the fault */
  public Fault fault() {
    return fault;
  }

  /** @return whether the register admits tokens through a {@link io.locksmith.FenceGuard} */
  public boolean fenced() {
    return fenced;
  }

  /**
   * @return the kind of lock the clients contend for: {@code EXCLUSIVE} ({@code LockClient.lock}), {@code
   *     FAIR} ({@code fairLock}) or {@code READ_WRITE} (writers take the write side, every second worker
   *     of a JVM is a reader on the read side)
   */
  public io.locksmith.LockKind kind() {
    return kind;
  }

  /** The kinds a run can check, by command-line name. */
  public static final java.util.List<String> KIND_NAMES = java.util.List.of("exclusive", "fair", "read-write");

  /**
   * @param kind a lock kind
   * @return its command-line name, e.g. {@code read-write}
   */
  public static String kindName(io.locksmith.LockKind kind) {
    return kind.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
  }

  /**
   * @param name {@code exclusive}, {@code fair} or {@code read-write}
   * @return the kind
   * @throws IllegalArgumentException for any other name (the message lists the kinds)
   */
  public static io.locksmith.LockKind parseKind(String name) {
    if (!KIND_NAMES.contains(name)) {
      throw new IllegalArgumentException("unknown lock kind '" + name + "'; kinds: " + String.join(", ", KIND_NAMES));
    }
    return io.locksmith.LockKind.valueOf(name.toUpperCase(java.util.Locale.ROOT).replace('-', '_'));
  }

  /** @return the number of contending clients (worker threads in all) */
  public int clients() {
    return clients;
  }

  /** @return the number of child JVMs the clients are spread over (0: harness threads) */
  public int processes() {
    return processes;
  }

  /** @return the number of lock names (and registers) contended for */
  public int locks() {
    return locks;
  }

  /** @return how long clients contend (start-up and shut-down come on top) */
  public Duration duration() {
    return duration;
  }

  /** @return the lease time */
  public Duration lease() {
    return lease;
  }

  /** @return whether leases are watched (renewed) rather than fixed */
  public boolean watched() {
    return watched;
  }

  /** @return the shortest think time between read and write */
  public Duration thinkMin() {
    return thinkMin;
  }

  /** @return the longest ordinary think time between read and write */
  public Duration thinkMax() {
    return thinkMax;
  }

  /** @return how long one acquisition waits */
  public Duration acquireWait() {
    return acquireWait;
  }

  /** @return how many CPU-bound busy-loop threads run beside the clients (in a JVM of their own), 0 for none */
  public int load() {
    return load;
  }

  /**
   * @return the scheduling allowance the clients are built with ({@code
   *     io.locksmith.ClientOptions.Builder#schedulingAllowance}); empty for the clients' default
   */
  public java.util.Optional<Duration> schedulingAllowance() {
    return java.util.Optional.ofNullable(schedulingAllowance);
  }

  /** @return whether the run may end before its duration ({@link Builder#stopEarly(int, int)}) */
  public boolean stopsEarly() {
    return stopAfterAcquisitions > 0 || stopAfterInjections > 0;
  }

  /** @return the grants after which a run that {@linkplain #stopsEarly() stops early} may end, 0 for no minimum */
  public int stopAfterAcquisitions() {
    return stopAfterAcquisitions;
  }

  /**
   * @return the injections after which a run that {@linkplain #stopsEarly() stops early} ends, and the most the
   *     nemesis makes; 0 for no limit
   */
  public int stopAfterInjections() {
    return stopAfterInjections;
  }

  @Override
  public String toString() {
    return backend.cliName() + " / " + fault.cliName() + (fenced ? " / fenced" : " / unfenced")
        + (kind == io.locksmith.LockKind.EXCLUSIVE ? "" : " / " + kindName(kind)) + ", " + clients
        + " clients in " + (processes == 0 ? "the harness" : processes + " JVMs") + ", " + locks + " locks, "
        + duration.toMillis() + " ms, " + (watched ? "watched " : "fixed ") + lease.toMillis() + " ms leases"
        + (load > 0 ? ", " + load + " busy-loop threads" : "")
        + (schedulingAllowance != null ? ", scheduling allowance " + schedulingAllowance.toMillis() + " ms" : "")
        + (stopsEarly() ? ", ends after " + stopAfterAcquisitions + " grants and " + stopAfterInjections
            + " injections" : "");
  }

  /** Builds {@link CheckSettings}; not thread-safe. Everything is validated by {@link #build()}. */
  public static final class Builder {
    private final CheckBackend backend;
    private final Fault fault;
    private boolean fenced;
    private io.locksmith.LockKind kind = io.locksmith.LockKind.EXCLUSIVE;
    private int clients = 4;
    private int processes = 2;
    private int locks = 2;
    private Duration duration = Duration.ofSeconds(30);
    private Duration lease = Duration.ofSeconds(2);
    private boolean watched = true;
    private Duration thinkMin = Duration.ofMillis(5);
    private Duration thinkMax = Duration.ofMillis(25);
    private Duration acquireWait = Duration.ofSeconds(5);
    private int load;
    private Duration schedulingAllowance;
    private int stopAfterAcquisitions;
    private int stopAfterInjections;

    private Builder(CheckBackend backend, Fault fault) {
      this.backend = backend;
      this.fault = fault;
    }

    /**
     * @param fenced whether the register checks fencing tokens
     * @return this builder
     */
    public Builder fenced(boolean fenced) {
      this.fenced = fenced;
      return this;
    }

    /**
     * Whether the backend offers the kind is known only from a client's {@code capabilities()}: the run
     * checks it once the backend is up ({@link SafetyCheck.UnsupportedKindException}).
     *
     * @param kind {@code EXCLUSIVE} (the default), {@code FAIR} or {@code READ_WRITE}
     * @return this builder
     */
    public Builder kind(io.locksmith.LockKind kind) {
      this.kind = kind;
      return this;
    }

    /**
     * @param clients contending clients, 1..64
     * @return this builder
     */
    public Builder clients(int clients) {
      this.clients = clients;
      return this;
    }

    /**
     * @param processes child JVMs, 2..16 (ignored by the in-JVM backend, which uses harness threads)
     * @return this builder
     */
    public Builder processes(int processes) {
      this.processes = processes;
      return this;
    }

    /**
     * @param locks lock names contended for, 1..64
     * @return this builder
     */
    public Builder locks(int locks) {
      this.locks = locks;
      return this;
    }

    /**
     * @param duration contention time, 2 s..24 h, and long enough for one injection cycle of the fault
     *     (checked by {@link #build()}, whose message gives the minimum)
     * @return this builder
     */
    public Builder duration(Duration duration) {
      this.duration = duration;
      return this;
    }

    /**
     * @param lease lease time, 200 ms..60 s
     * @param watched renewed while held (true) or fixed (false)
     * @return this builder
     */
    public Builder lease(Duration lease, boolean watched) {
      this.lease = lease;
      this.watched = watched;
      return this;
    }

    /**
     * @param min shortest think time, ≥ 0
     * @param max longest ordinary think time, ≥ min and shorter than the lease
     * @return this builder
     */
    public Builder think(Duration min, Duration max) {
      this.thinkMin = min;
      this.thinkMax = max;
      return this;
    }

    /**
     * @param wait how long one acquisition waits, 100 ms..5 min
     * @return this builder
     */
    public Builder acquireWait(Duration wait) {
      this.acquireWait = wait;
      return this;
    }

    /**
     * CPU-bound busy loops beside the clients, to check that holders are told of a loss in time on a loaded
     * host: that many threads spin in a JVM of their own for the whole run.
     *
     * @param threads busy-loop threads, 0..16 (0: none, the default)
     * @return this builder
     */
    public Builder load(int threads) {
      this.load = threads;
      return this;
    }

    /**
     * @param allowance the scheduling allowance to build the clients with, from 0 to less than half the
     *     lease; {@code null} for the clients' default
     * @return this builder
     */
    public Builder schedulingAllowance(Duration allowance) {
      this.schedulingAllowance = allowance;
      return this;
    }

    /**
     * Ends the run before its duration, which then only bounds it: once at least {@code acquisitions} locks
     * were granted and {@code injections} fault injections have been healed, the last one followed by a
     * grant (the backend serves again). The nemesis makes no more than {@code injections} injections, and
     * attempts the first as soon as every client has been granted a lock once (at the latest after the
     * usual delay). For short smokes (CI) that need one injection, not a campaign. Both 0 (the default):
     * the run lasts its duration.
     *
     * @param acquisitions grants to wait for, 0..1,000,000
     * @param injections healed injections to wait for, 0..1,000; more than 0 needs a fault other than none
     * @return this builder
     */
    public Builder stopEarly(int acquisitions, int injections) {
      this.stopAfterAcquisitions = acquisitions;
      this.stopAfterInjections = injections;
      return this;
    }

    /**
     * @return the settings
     * @throws NullPointerException if a duration or the kind is null
     * @throws IllegalArgumentException if a value is out of range, the kind is {@code SEMAPHORE}, the backend does not support the
     *     fault (the message lists the faults it does support), or the duration is too short for one
     *     injection cycle of the fault (the message gives the minimum)
     */
    public CheckSettings build() {
      Objects.requireNonNull(duration, "duration");
      Objects.requireNonNull(lease, "lease");
      Objects.requireNonNull(thinkMin, "thinkMin");
      Objects.requireNonNull(thinkMax, "thinkMax");
      Objects.requireNonNull(acquireWait, "acquireWait");
      Objects.requireNonNull(kind, "kind");
      if (kind == io.locksmith.LockKind.SEMAPHORE) {
        throw new IllegalArgumentException("the checker runs the kinds " + String.join(", ", KIND_NAMES)
            + ", not semaphores");
      }
      if (!backend.supportedFaults().contains(fault)) {
        throw new IllegalArgumentException("backend " + backend.cliName() + " does not support fault "
            + fault.cliName() + "; it supports: " + backend.supportedFaults().stream().sorted()
            .map(Fault::cliName).reduce((a, b) -> a + ", " + b).orElse(""));
      }
      range("clients", clients, 1, 64);
      range("locks", locks, 1, 64);
      if (backend.usesChildProcesses()) {
        range("processes", processes, 2, 16);
        if (clients < processes) {
          throw new IllegalArgumentException("clients (" + clients + ") must be at least processes (" + processes + ")");
        }
      }
      between("duration", duration, Duration.ofSeconds(2), Duration.ofHours(24));
      between("lease", lease, Duration.ofMillis(200), Duration.ofSeconds(60));
      between("acquireWait", acquireWait, Duration.ofMillis(100), Duration.ofMinutes(5));
      range("load", load, 0, 16);
      range("stopEarly acquisitions", stopAfterAcquisitions, 0, 1_000_000);
      range("stopEarly injections", stopAfterInjections, 0, 1_000);
      if (stopAfterInjections > 0 && fault == Fault.NONE) {
        throw new IllegalArgumentException("stopEarly injections needs a fault, not none");
      }
      if (schedulingAllowance != null
          && (schedulingAllowance.isNegative() || schedulingAllowance.compareTo(lease.dividedBy(2)) >= 0)) {
        throw new IllegalArgumentException("schedulingAllowance must be from 0 to less than half the lease ("
            + lease.toMillis() + " ms), was " + schedulingAllowance);
      }
      if (thinkMin.isNegative() || thinkMax.compareTo(thinkMin) < 0 || thinkMax.compareTo(lease) >= 0) {
        throw new IllegalArgumentException("think time must satisfy 0 <= min <= max < lease, was " + thinkMin
            + ".." + thinkMax + " with lease " + lease);
      }
      long minimum = Nemesis.minimumDurationMillis(fault, lease.toMillis());
      if (duration.toMillis() < minimum) {
        throw new IllegalArgumentException("duration " + duration.toMillis() + " ms is too short for one injection of "
            + fault.cliName() + " with " + lease.toMillis() + " ms leases; it needs at least " + minimum + " ms ("
            + (minimum + 999) / 1000 + " s)");
      }
      int perJvm = backend.usesChildProcesses() ? processes : 1;
      if (kind == io.locksmith.LockKind.READ_WRITE && clients <= perJvm) {
        throw new IllegalArgumentException("read-write needs readers as well as writers: every second client of a "
            + "JVM reads, so clients (" + clients + ") must exceed " + (backend.usesChildProcesses()
            ? "processes (" + processes + ")" : "1"));
      }
      if (!backend.usesChildProcesses()) {
        processes = 0;
      }
      return new CheckSettings(this);
    }

    private static void range(String what, int value, int min, int max) {
      if (value < min || value > max) {
        throw new IllegalArgumentException(what + " must be in " + min + ".." + max + ", was " + value);
      }
    }

    private static void between(String what, Duration value, Duration min, Duration max) {
      if (value.compareTo(min) < 0 || value.compareTo(max) > 0) {
        throw new IllegalArgumentException(what + " must be in " + min + ".." + max + ", was " + value);
      }
    }
  }
}
