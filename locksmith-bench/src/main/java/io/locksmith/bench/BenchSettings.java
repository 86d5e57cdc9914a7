package io.locksmith.bench;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What {@link Bench#run} does. Immutable.
 *
 * @param scenario the workload
 * @param against peers to run next to Locksmith: any of {@code raw, fenced-minimal, locksmith-fair,
 *     locksmith-rw, locksmith-semaphore, redisson, redisson-fair, redisson-fenced, spring}
 *     ({@code fenced-minimal} is issue 27's minimal fenced lock, {@code locksmith-rw} is the
 *     write side of a read-write lock, {@code locksmith-semaphore} a one-permit semaphore); in the
 *     redlock scenario {@code redisson} adds RLock and RedissonRedLock,
 *     {@code raw} adds the single-node floor, a five-node parallel-quorum floor and, as a control, the
 *     same quorum asked one node after another;
 *     empty for Locksmith alone
 * @param duration measured time per implementation, split into alternating slices (plus a warm-up)
 * @param threads threads per implementation (waiters, for the herd); 0 for the scenario's default
 * @param uri a Redis server to use instead of starting one, or null
 * @param nodes Redlock's five masters to use instead of starting them, or empty
 * @param rtt round-trip time added to every link between the clients and a server, as between hosts
 *     (half of it each way, through a delaying proxy per server); {@link Duration#ZERO} for none. With it,
 *     network latency rather than this machine's processors dominates, as it does when Redlock's nodes
 *     are separate hosts. One thread only: the proxy holds a connection's chunks back one after
 *     another, so requests overlapping on one connection would be delayed more than once
 * @param readRatio the rw-mix scenario: the share of the threads that only read (the others only
 *     write), rounded to a thread count with at least one of each; {@link #DEFAULT_READ_RATIO} unless
 *     given
 * @param segments for the segmented scenario: the segment counts to compare, each run on the same
 *     workload in the same run (1 is one lock over the whole stock); 1 to 1024 each, no duplicates
 * @param hold for the segmented scenario: the work a sale does while it holds its segment's lock, between
 *     reading the segment and writing it back (the order being recorded; simulated by sleeping, so it
 *     costs no processor), 0 to 100 ms
 * @param processes JVMs the threads run in: 1 runs everything in this JVM; more (hot-key only, 2 to 16)
 *     starts that many child JVMs on this JVM's class path, each running {@code threads} threads of every
 *     implementation against the same server, the slices alternating in step across them
 * @param minCycles 0 for a measurement: every window (warm-up, slice, cost sample) lasts its share of the
 *     duration. More, for a smoke run that proves the harness works without measuring: a window also stays
 *     open until every thread has completed that many cycles in it or given up waiting (after the 2 s
 *     grace), so that a tiny duration (down to 10 ms) still sees every thread cycle; 0 to 1000
 */
public record BenchSettings(Scenario scenario, List<String> against, Duration duration, int threads,
    String uri, List<String> nodes, Duration rtt, double readRatio, List<Integer> segments, Duration hold,
    int processes, int minCycles) {
  /** The most child JVMs a multi-process run starts. */
  public static final int MAX_PROCESSES = 16;

  /** The share of reading threads in the rw-mix scenario unless told otherwise. */
  public static final double DEFAULT_READ_RATIO = 0.8;
  /** The segment counts compared by default. */
  public static final List<Integer> DEFAULT_SEGMENTS = List.of(1, 5, 20);
  /** The default work under a segment's lock. */
  public static final Duration DEFAULT_HOLD = Duration.ofMillis(2);

  /** Every peer name {@code against} accepts. */
  public static final List<String> PEERS = List.of("raw", "fenced-minimal", "locksmith-fair", "locksmith-rw",
      "locksmith-semaphore", "redisson", "redisson-fair", "redisson-fenced", "spring");

  /**
   * @throws NullPointerException if a required component is null
   * @throws IllegalArgumentException for an unknown peer, a duration under 1 s (10 ms with minCycles), minCycles
   *     outside 0 to 1000, negative threads, a
   *     node list that is not empty and not 5 long, or an rtt that is negative, over 100 ms (Redlock's
   *     default node timeout is 250 ms), or given with more than one thread or with a URI that is not
   *     a plain {@code redis://host[:port]} (the proxy stands in for one server, without TLS); a read
   *     ratio not strictly between 0 and 1, or rw-mix with fewer than 2 threads (one of each side); processes
   *     under 1 or over {@link #MAX_PROCESSES}, or more than one with another scenario than hot-key or with an
   *     rtt
   */
  public BenchSettings {
    Objects.requireNonNull(scenario, "scenario");
    against = List.copyOf(against);
    Objects.requireNonNull(duration, "duration");
    nodes = List.copyOf(nodes);
    for (String peer : against) {
      if (!PEERS.contains(peer)) {
        throw new IllegalArgumentException("unknown peer '" + peer + "'; any of " + String.join(",", PEERS));
      }
    }
    if (minCycles < 0 || minCycles > 1000) {
      throw new IllegalArgumentException("minCycles must be between 0 and 1000, was " + minCycles);
    }
    if (duration.compareTo(minCycles > 0 ? Duration.ofMillis(10) : Duration.ofSeconds(1)) < 0) {
      throw new IllegalArgumentException("duration must be at least 1s (10ms with minCycles), was " + duration);
    }
    if (threads < 0) {
      throw new IllegalArgumentException("threads must not be negative, was " + threads);
    }
    Objects.requireNonNull(rtt, "rtt");
    if (rtt.isNegative() || rtt.compareTo(Duration.ofMillis(100)) > 0) {
      throw new IllegalArgumentException("rtt must be between 0 and 100ms, was " + rtt);
    }
    if (!rtt.isZero() && (threads > 1 || (threads == 0 && scenario.defaultThreads > 1))) {
      throw new IllegalArgumentException("rtt needs one thread (the uncontended or redlock scenario): the "
          + "delaying proxy would hold back overlapping requests on a connection more than once");
    }
    if (!rtt.isZero()) {
      List<String> given = new ArrayList<>(nodes);
      if (uri != null) {
        given.add(uri);
      }
      for (String server : given) {
        URI u = URI.create(server); // IllegalArgumentException if not a URI
        if (!"redis".equals(u.getScheme()) || u.getHost() == null) {
          throw new IllegalArgumentException("rtt needs plain redis://host:port URIs (the proxy stands in "
              + "for one server, without TLS), was " + server);
        }
      }
    }
    if (!nodes.isEmpty() && nodes.size() != 5) {
      throw new IllegalArgumentException("give all 5 Redlock nodes or none, got " + nodes.size());
    }
    if (!(readRatio > 0 && readRatio < 1)) { // NaN too
      throw new IllegalArgumentException("read ratio must be between 0 and 1 (exclusive), was " + readRatio);
    }
    if (scenario == Scenario.RW_MIX && threads == 1) {
      throw new IllegalArgumentException("rw-mix needs at least 2 threads, a reader and a writer");
    }
    segments = List.copyOf(segments);
    if (segments.isEmpty() || segments.stream().anyMatch(n -> n < 1 || n > 1024)
        || segments.stream().distinct().count() != segments.size()) {
      throw new IllegalArgumentException("segments must be distinct counts from 1 to 1024, was " + segments);
    }
    Objects.requireNonNull(hold, "hold");
    if (hold.isNegative() || hold.compareTo(Duration.ofMillis(100)) > 0) {
      throw new IllegalArgumentException("hold must be between 0 and 100ms, was " + hold);
    }
    if (processes < 1 || processes > MAX_PROCESSES) {
      throw new IllegalArgumentException("processes must be between 1 and " + MAX_PROCESSES + ", was " + processes);
    }
    if (processes > 1 && scenario != Scenario.HOT_KEY) {
      throw new IllegalArgumentException("several processes apply to the hot-key scenario only, not "
          + scenario.cliName());
    }
    if (processes > 1 && !rtt.isZero()) {
      throw new IllegalArgumentException("several processes cannot be combined with an rtt (one thread only)");
    }
  }

  /** Settings of a measurement ({@code minCycles} 0). */
  public BenchSettings(Scenario scenario, List<String> against, Duration duration, int threads, String uri,
      List<String> nodes, Duration rtt, double readRatio, List<Integer> segments, Duration hold, int processes) {
    this(scenario, against, duration, threads, uri, nodes, rtt, readRatio, segments, hold, processes, 0);
  }

  /** @return these settings for a smoke run: {@code duration} and {@code minCycles} replaced */
  public BenchSettings smoke(Duration duration, int minCycles) {
    return new BenchSettings(scenario, against, duration, threads, uri, nodes, rtt, readRatio, segments, hold,
        processes, minCycles);
  }

  /** Settings in one JVM. */
  public BenchSettings(Scenario scenario, List<String> against, Duration duration, int threads, String uri,
      List<String> nodes, Duration rtt, double readRatio, List<Integer> segments, Duration hold) {
    this(scenario, against, duration, threads, uri, nodes, rtt, readRatio, segments, hold, 1);
  }

  /** Settings with the segmented scenario's defaults. */
  public BenchSettings(Scenario scenario, List<String> against, Duration duration, int threads, String uri,
      List<String> nodes, Duration rtt, double readRatio) {
    this(scenario, against, duration, threads, uri, nodes, rtt, readRatio, DEFAULT_SEGMENTS, DEFAULT_HOLD);
  }

  /** Settings without added round-trip time. */
  public BenchSettings(Scenario scenario, List<String> against, Duration duration, int threads, String uri,
      List<String> nodes) {
    this(scenario, against, duration, threads, uri, nodes, Duration.ZERO);
  }

  /** Settings with the default read ratio. */
  public BenchSettings(Scenario scenario, List<String> against, Duration duration, int threads, String uri,
      List<String> nodes, Duration rtt) {
    this(scenario, against, duration, threads, uri, nodes, rtt, DEFAULT_READ_RATIO);
  }

  /** @return the thread count in effect */
  public int effectiveThreads() {
    return threads > 0 ? threads : scenario.defaultThreads;
  }

  /** @return in the rw-mix scenario, how many threads only read: at least one, and one writer left */
  public int readers() {
    int all = effectiveThreads();
    return (int) Math.max(1, Math.min(all - 1, Math.round(all * readRatio)));
  }
}
