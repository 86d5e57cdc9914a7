package io.locksmith.bench;

import java.util.List;

/**
 * What one implementation achieved in one scenario. Fields that do not apply are null.
 *
 * @param impl implementation name, e.g. {@code locksmith}, {@code redisson}, {@code raw}
 * @param opsPerSec acquire + release cycles per second, all threads together
 * @param p50Micros median cycle latency (acquire, including any wait, plus release)
 * @param p99Micros 99th percentile cycle latency
 * @param acquireP50Micros median latency of the acquire alone (including any wait)
 * @param serverCommandsPerOp commands clients sent to the server(s) per cycle, scripts' inner commands
 *     excluded, from a separate MONITOR sample
 * @param wakeupsPerOp PUBLISHes per cycle (from any source), same sample
 * @param handoffP50Micros median time from a release starting to a waiting thread's grant
 * @param handoffP99Micros 99th percentile of the same
 * @param minThreadOps fewest cycles any thread completed (0 = a starved thread)
 * @param maxThreadOps most cycles any thread completed
 * @param abandonedWaits threads still waiting 2 s after a measured window closed (they gave up)
 * @param sides the rw-mix scenario: the read side and the write side on their own; null otherwise
 * @param processOps a run in several JVMs: the cycles each JVM completed, all its threads together, in
 *     process order; null for a run in one JVM
 * @param serverMicrosPerOp microseconds the server(s) spent executing commands per cycle, from
 *     {@code INFO commandstats} over a separate sample without MONITOR (scripts' inner commands counted
 *     once, inside their script); null where not sampled
 * @param serverCallsPerOp commands the server(s) executed per cycle, those run inside scripts included, same
 *     sample
 */
public record BenchResult(String impl, double opsPerSec, Double p50Micros, Double p99Micros,
    Double acquireP50Micros, Double serverCommandsPerOp, Double wakeupsPerOp, Double handoffP50Micros, Double handoffP99Micros,
    Long minThreadOps, Long maxThreadOps, long abandonedWaits, Sides sides, List<Long> processOps,
    Double serverMicrosPerOp, Double serverCallsPerOp) {

  /** @throws NullPointerException if {@code impl} or an element of {@code processOps} is null */
  public BenchResult {
    java.util.Objects.requireNonNull(impl, "impl");
    processOps = processOps == null ? null : List.copyOf(processOps);
  }

  /** Results without the server's own statistics. */
  public BenchResult(String impl, double opsPerSec, Double p50Micros, Double p99Micros, Double acquireP50Micros,
      Double serverCommandsPerOp, Double wakeupsPerOp, Double handoffP50Micros, Double handoffP99Micros,
      Long minThreadOps, Long maxThreadOps, long abandonedWaits, Sides sides, List<Long> processOps) {
    this(impl, opsPerSec, p50Micros, p99Micros, acquireP50Micros, serverCommandsPerOp, wakeupsPerOp,
        handoffP50Micros, handoffP99Micros, minThreadOps, maxThreadOps, abandonedWaits, sides, processOps, null,
        null);
  }

  /**
   * @param perOp a server cost sample: commands and PUBLISHes per cycle, then (if read) the server's
   *     microseconds and calls per cycle; or null
   * @return this result with the server's microseconds and calls from {@code perOp}, if it has them
   */
  BenchResult withServerTime(double[] perOp) {
    if (perOp == null || perOp.length < 4) {
      return this;
    }
    return new BenchResult(impl, opsPerSec, p50Micros, p99Micros, acquireP50Micros, serverCommandsPerOp,
        wakeupsPerOp, handoffP50Micros, handoffP99Micros, minThreadOps, maxThreadOps, abandonedWaits, sides,
        processOps, perOp[2], perOp[3]);
  }

  /** Results of a run in one JVM. */
  public BenchResult(String impl, double opsPerSec, Double p50Micros, Double p99Micros, Double acquireP50Micros,
      Double serverCommandsPerOp, Double wakeupsPerOp, Double handoffP50Micros, Double handoffP99Micros,
      Long minThreadOps, Long maxThreadOps, long abandonedWaits, Sides sides) {
    this(impl, opsPerSec, p50Micros, p99Micros, acquireP50Micros, serverCommandsPerOp, wakeupsPerOp,
        handoffP50Micros, handoffP99Micros, minThreadOps, maxThreadOps, abandonedWaits, sides, null);
  }

  /** @return the fewest cycles any JVM completed (0 = a starved JVM), or null for a run in one JVM */
  public Long minProcessOps() {
    return processOps == null ? null : processOps.stream().mapToLong(Long::longValue).min().orElse(0);
  }

  /** @return the most cycles any JVM completed, or null for a run in one JVM */
  public Long maxProcessOps() {
    return processOps == null ? null : processOps.stream().mapToLong(Long::longValue).max().orElse(0);
  }

  /** Results without sides (every scenario but rw-mix). */
  public BenchResult(String impl, double opsPerSec, Double p50Micros, Double p99Micros, Double acquireP50Micros,
      Double serverCommandsPerOp, Double wakeupsPerOp, Double handoffP50Micros, Double handoffP99Micros,
      Long minThreadOps, Long maxThreadOps, long abandonedWaits) {
    this(impl, opsPerSec, p50Micros, p99Micros, acquireP50Micros, serverCommandsPerOp, wakeupsPerOp,
        handoffP50Micros, handoffP99Micros, minThreadOps, maxThreadOps, abandonedWaits, null);
  }

  /**
   * The two sides of the rw-mix scenario.
   *
   * @param reads the threads that only read
   * @param writes the threads that only write
   */
  public record Sides(Side reads, Side writes) {}

  /**
   * What the threads of one side of the rw-mix scenario achieved.
   *
   * @param threads how many threads took this side
   * @param cycles acquire + release cycles of this side in the measured windows, all its threads together
   * @param perSec the same per second
   * @param minThreadOps fewest cycles any thread of this side completed (0 = a starved thread)
   * @param maxThreadOps most cycles any thread of this side completed
   * @param acquireP99Micros 99th percentile of this side's acquires (including any wait); null if none
   * @param acquireMaxMicros longest acquire of this side that completed in a window; null if none
   */
  public record Side(int threads, long cycles, double perSec, long minThreadOps, long maxThreadOps,
      Double acquireP99Micros, Double acquireMaxMicros) {}
}
