package io.locksmith.micrometer;

import io.locksmith.Lease;
import io.locksmith.LeaseState;
import io.locksmith.LockObserver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;

/**
 * Micrometer meters for one lock client, as its {@link LockObserver}:
 *
 * <ul>
 *   <li>{@value #ACQUIRE} (timer): each acquisition from start to end, tag {@code outcome} =
 *       {@code granted}, {@code timeout} or {@code failed}; for {@code granted} it is the wait time;
 *   <li>{@value #HOLD} (timer): from grant to release or loss, tag {@code end} = {@code released} or
 *       {@code lost};
 *   <li>{@value #HELD} (gauge): leases this client holds now;
 *   <li>{@value #TRANSITIONS} (counter): leases that became {@code uncertain} or {@code lost} (tag
 *       {@code state});
 *   <li>{@value #STALE_WRITES} (counter): stale writes a fence rejected, counted by
 *       {@link #staleWriteRejected(String)};
 *   <li>{@value #DEGRADED} (counter): grants made by the JVM-local fallback of a lock with a {@link
 *       io.locksmith.DegradationPolicy} while its backend was unreachable (leases that are {@linkplain
 *       Lease#isDegraded() degraded} and carry no fencing token): alert on any increase.
 * </ul>
 *
 * <p>Every meter has the tags {@code backend}, {@code client} and (except the gauge, the stale-write and
 * the degraded-grant counters) {@code kind}. Lock names are not a tag unless {@link Builder#nameTagPatterns(List)} opts in: a
 * name matching one of the patterns is the {@code name} tag's value, any other name gives {@code other}.
 *
 * <p>Thread-safe. Meters are created on first use and cached by Micrometer.
 */
public final class LocksmithMetrics implements LockObserver {

  /** Acquisition timer. */
  public static final String ACQUIRE = "locksmith.acquire";
  /** Hold timer. */
  public static final String HOLD = "locksmith.hold";
  /** Held leases gauge. */
  public static final String HELD = "locksmith.leases.held";
  /** Uncertain and lost transitions counter. */
  public static final String TRANSITIONS = "locksmith.lease.transitions";
  /** Stale writes rejected counter. */
  public static final String STALE_WRITES = "locksmith.fence.rejected";
  /** Counter: degraded grants, made locally while the backend was unreachable. */
  public static final String DEGRADED = "locksmith.acquire.degraded";

  private final MeterRegistry registry;
  private final Tags base;
  private final List<Pattern> namePatterns;
  private final AtomicInteger held = new AtomicInteger();
  /** Grant time and tags of each live lease, keyed by identity (the observer gets the same object). */
  private final Map<Lease, Held> live = new ConcurrentHashMap<>();

  private record Held(long grantedNanos, Tags tags) {}

  private LocksmithMetrics(Builder b) {
    this.registry = b.registry;
    this.base = Tags.of("backend", b.backend, "client", b.client);
    this.namePatterns = List.copyOf(b.namePatterns);
    Gauge.builder(HELD, held, AtomicInteger::get).tags(base).description("Leases this client holds now")
        .register(registry);
  }

  /**
   * Starts meters for one client.
   *
   * @param registry where the meters go
   * @return a builder
   */
  public static Builder builder(MeterRegistry registry) {
    return new Builder(registry);
  }

  /**
   * How many leases this client holds now (the gauge's value).
   *
   * @return the count
   */
  public int held() {
    return held.get();
  }

  /**
   * Counts a write a fence rejected as stale ({@code StaleTokenException}); call it where the rejection
   * is caught.
   *
   * @param resource what the write was for (not a tag unless it matches a name pattern)
   */
  public void staleWriteRejected(String resource) {
    Counter.builder(STALE_WRITES).tags(base).tags(nameTag(resource)).description("Stale writes rejected by a fence")
        .register(registry).increment();
  }

  @Override
  public void acquireCompleted(String lockName, String kind, Outcome outcome, Duration elapsed, Lease lease) {
    Tags tags = base.and("kind", kind).and(nameTag(lockName));
    Timer.builder(ACQUIRE).tags(tags).tag("outcome", outcome.name().toLowerCase(Locale.ROOT))
        .description("Lock acquisitions, start to end").register(registry).record(elapsed);
    if (lease != null && live.putIfAbsent(lease, new Held(System.nanoTime(), tags)) == null) {
      held.incrementAndGet();
    }
  }

  @Override
  public void degradedGrant(String lockName, io.locksmith.BackendUnavailableException cause) {
    Counter.builder(DEGRADED).tags(base.and(nameTag(lockName))).description("Grants made by the JVM-local"
        + " fallback while the backend was unreachable").register(registry).increment();
  }

  @Override
  public void leaseStateChanged(Lease lease, LeaseState from, LeaseState to) {
    if (to == LeaseState.UNCERTAIN || to == LeaseState.LOST) {
      Held h = live.get(lease);
      Tags tags = h != null ? h.tags() : base.and("kind", "unknown");
      Counter.builder(TRANSITIONS).tags(tags).tag("state", to.name().toLowerCase(Locale.ROOT))
          .description("Leases that became uncertain or lost").register(registry).increment();
    }
    if (to == LeaseState.RELEASED || to == LeaseState.LOST) {
      Held h = live.remove(lease);
      if (h != null) {
        held.decrementAndGet();
        Timer.builder(HOLD).tags(h.tags()).tag("end", to == LeaseState.LOST ? "lost" : "released")
            .description("Time leases were held").register(registry)
            .record(Duration.ofNanos(System.nanoTime() - h.grantedNanos()));
      }
    }
  }

  private Tags nameTag(String name) {
    if (namePatterns.isEmpty()) {
      return Tags.empty();
    }
    for (Pattern p : namePatterns) {
      if (p.matcher(name).matches()) {
        return Tags.of("name", name);
      }
    }
    return Tags.of("name", "other");
  }

  @Override
  public String toString() {
    return "LocksmithMetrics" + base;
  }

  /** Builds {@link LocksmithMetrics}; not thread-safe. */
  public static final class Builder {
    private final MeterRegistry registry;
    private String backend = "unknown";
    private String client = "default";
    private final List<Pattern> namePatterns = new ArrayList<>();

    private Builder(MeterRegistry registry) {
      this.registry = Objects.requireNonNull(registry, "registry");
    }

    /**
     * @param backend the {@code backend} tag, e.g. {@code redis}
     * @return this builder
     */
    public Builder backend(String backend) {
      this.backend = Objects.requireNonNull(backend, "backend");
      return this;
    }

    /**
     * @param client the {@code client} tag, the client's name in the application
     * @return this builder
     */
    public Builder client(String client) {
      this.client = Objects.requireNonNull(client, "client");
      return this;
    }

    /**
     * Opts in to a {@code name} tag for lock names matching one of these regular expressions (whole
     * name); others are tagged {@code other}. Keep the set of matching names small: each is a time series.
     *
     * @param patterns regular expressions
     * @return this builder
     * @throws java.util.regex.PatternSyntaxException if a pattern is not a regular expression
     */
    public Builder nameTagPatterns(List<String> patterns) {
      namePatterns.clear();
      for (String p : patterns) {
        namePatterns.add(Pattern.compile(p));
      }
      return this;
    }

    /**
     * @return the meters, registered with the registry (the gauge at once, the others on first use)
     */
    public LocksmithMetrics build() {
      return new LocksmithMetrics(this);
    }
  }
}
