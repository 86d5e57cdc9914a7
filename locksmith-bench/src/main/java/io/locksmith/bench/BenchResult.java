package io.locksmith.bench;

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
 */
public record BenchResult(String impl, double opsPerSec, Double p50Micros, Double p99Micros,
    Double acquireP50Micros, Double serverCommandsPerOp, Double wakeupsPerOp, Double handoffP50Micros, Double handoffP99Micros,
    Long minThreadOps, Long maxThreadOps, long abandonedWaits) {}
