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
 *     {@code raw} adds the single-node floor and a five-node parallel-quorum floor;
 *     empty for Locksmith alone
 * @param duration measured time per implementation, split into alternating slices (plus a warm-up)
 * @param threads threads per implementation (waiters, for the herd); 0 for the scenario's default
 * @param uri a Redis server to use instead of starting one, or null
 * @param nodes Redlock's five masters to use instead of starting them, or empty
 */
public record BenchSettings(Scenario scenario, List<String> against, Duration duration, int threads,
    String uri, List<String> nodes) {
  /** Every peer name {@code against} accepts. */
  public static final List<String> PEERS = List.of("raw", "locksmith-fair", "locksmith-rw",
      "locksmith-semaphore", "redisson", "redisson-fair", "redisson-fenced", "spring");

  /**
   * @throws NullPointerException if a required component is null
   * @throws IllegalArgumentException for an unknown peer, a duration under 1 s, negative threads, or a
   *     node list that is not empty and not 5 long
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
    if (!nodes.isEmpty() && nodes.size() != 5) {
      throw new IllegalArgumentException("give all 5 Redlock nodes or none, got " + nodes.size());
    }
  }

  /** @return the thread count in effect */
  public int effectiveThreads() {
    return threads > 0 ? threads : scenario.defaultThreads;
  }
}
