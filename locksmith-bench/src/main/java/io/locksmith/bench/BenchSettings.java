package io.locksmith.bench;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * What {@link Bench#run} does. Immutable.
 *
 * @param scenario the workload
 * @param against peers to run next to Locksmith: any of {@code raw, locksmith-fair, locksmith-rw,
 *     locksmith-semaphore, redisson, redisson-fair, redisson-fenced, spring} ({@code locksmith-rw} is the
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
 *     are separate hosts
 */
public record BenchSettings(Scenario scenario, List<String> against, Duration duration, int threads,
    String uri, List<String> nodes, Duration rtt) {
  /** Every peer name {@code against} accepts. */
  public static final List<String> PEERS = List.of("raw", "locksmith-fair", "locksmith-rw",
      "locksmith-semaphore", "redisson", "redisson-fair", "redisson-fenced", "spring");

  /**
   * @throws NullPointerException if a required component is null
   * @throws IllegalArgumentException for an unknown peer, a duration under 1 s, negative threads, a
   *     node list that is not empty and not 5 long, or an rtt that is negative or over 1 s
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
    if (duration.compareTo(Duration.ofSeconds(1)) < 0) {
      throw new IllegalArgumentException("duration must be at least 1s, was " + duration);
    }
    if (threads < 0) {
      throw new IllegalArgumentException("threads must not be negative, was " + threads);
    }
    Objects.requireNonNull(rtt, "rtt");
    if (rtt.isNegative() || rtt.compareTo(Duration.ofSeconds(1)) > 0) {
      throw new IllegalArgumentException("rtt must be between 0 and 1s, was " + rtt);
    }
    if (!nodes.isEmpty() && nodes.size() != 5) {
      throw new IllegalArgumentException("give all 5 Redlock nodes or none, got " + nodes.size());
    }
  }

  /** Settings without added round-trip time. */
  public BenchSettings(Scenario scenario, List<String> against, Duration duration, int threads, String uri,
      List<String> nodes) {
    this(scenario, against, duration, threads, uri, nodes, Duration.ZERO);
  }

  /** @return the thread count in effect */
  public int effectiveThreads() {
    return threads > 0 ? threads : scenario.defaultThreads;
  }
}
