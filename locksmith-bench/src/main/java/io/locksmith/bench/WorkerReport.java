package io.locksmith.bench;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.zip.DataFormatException;
import org.HdrHistogram.Histogram;

/**
 * What one child JVM of a multi-process run saw of one implementation over all its measured slices, as
 * it travels to the harness on one line ({@link #encode()}, {@link #decode(String)}), and how the
 * harness adds the JVMs up ({@link #aggregate}). Immutable once built; not shared between threads.
 *
 * @param ops cycles completed inside the measured windows, all threads of the JVM together
 * @param timeouts waits given up 2 s after a window closed
 * @param measuredNanos the measured windows' total length
 * @param perThread cycles per thread of the JVM
 * @param cycles cycle latencies (acquire with any wait, plus release), nanoseconds
 * @param acquires acquire latencies (with any wait), nanoseconds
 */
record WorkerReport(long ops, long timeouts, long measuredNanos, long[] perThread, Histogram cycles,
    Histogram acquires) {

  static WorkerReport of(Workload w) {
    return new WorkerReport(w.ops, w.timeouts, w.measuredNanos, w.perThread.clone(), w.cycles, w.acquires);
  }

  /** @return the report on one line, fields separated by spaces (histograms compressed, in base64) */
  String encode() {
    StringBuilder threads = new StringBuilder();
    for (long c : perThread) {
      threads.append(threads.length() == 0 ? "" : ",").append(c);
    }
    return ops + " " + timeouts + " " + measuredNanos + " " + threads + " " + histogram(cycles) + " "
        + histogram(acquires);
  }

  /**
   * @param line what {@link #encode()} gave
   * @return the report
   * @throws IllegalArgumentException if the line is not one
   */
  static WorkerReport decode(String line) {
    String[] f = line.trim().split(" ");
    if (f.length != 6) {
      throw new IllegalArgumentException("not a worker report: " + line);
    }
    try {
      long[] perThread = Arrays.stream(f[3].split(",")).mapToLong(Long::parseLong).toArray();
      return new WorkerReport(Long.parseLong(f[0]), Long.parseLong(f[1]), Long.parseLong(f[2]), perThread,
          histogram(f[4]), histogram(f[5]));
    } catch (NumberFormatException | DataFormatException e) {
      throw new IllegalArgumentException("not a worker report: " + line, e);
    }
  }

  private static String histogram(Histogram h) {
    ByteBuffer buffer = ByteBuffer.allocate(h.getNeededByteBufferCapacity());
    int length = h.encodeIntoCompressedByteBuffer(buffer);
    return Base64.getEncoder().encodeToString(Arrays.copyOf(buffer.array(), length));
  }

  private static Histogram histogram(String base64) throws DataFormatException {
    return Histogram.decodeFromCompressedByteBuffer(ByteBuffer.wrap(Base64.getDecoder().decode(base64)), 0);
  }

  /**
   * One implementation's result over every JVM: throughput of all together, latency percentiles of all
   * their cycles, per-thread min/max over every thread of every JVM, and each JVM's cycles. Hand-off
   * times are not reported: the release and the grant happen in different JVMs.
   *
   * @param impl the implementation's name
   * @param reports one per JVM, in process order
   * @param perOp server commands and PUBLISHes per cycle, optionally the server's microseconds and calls
   *     per cycle, or null if not sampled
   * @return the result
   * @throws IllegalArgumentException if there is no report or nothing was measured
   */
  static BenchResult aggregate(String impl, List<WorkerReport> reports, double[] perOp) {
    if (reports.isEmpty()) {
      throw new IllegalArgumentException("no worker reports for " + impl);
    }
    Histogram cycles = new Histogram(3);
    Histogram acquires = new Histogram(3);
    long ops = 0;
    long timeouts = 0;
    long nanos = 0;
    long min = Long.MAX_VALUE;
    long max = 0;
    List<Long> perProcess = new ArrayList<>();
    for (WorkerReport r : reports) {
      cycles.add(r.cycles());
      acquires.add(r.acquires());
      ops += r.ops();
      timeouts += r.timeouts();
      // the JVMs ran their windows side by side: the measured time is one JVM's, not their sum
      nanos = Math.max(nanos, r.measuredNanos());
      perProcess.add(Arrays.stream(r.perThread()).sum());
      for (long c : r.perThread()) {
        min = Math.min(min, c);
        max = Math.max(max, c);
      }
    }
    if (nanos == 0) {
      throw new IllegalArgumentException("nothing was measured for " + impl);
    }
    boolean any = cycles.getTotalCount() > 0;
    return new BenchResult(impl, ops / (nanos / 1e9),
        any ? cycles.getValueAtPercentile(50) / 1000.0 : null, any ? cycles.getValueAtPercentile(99) / 1000.0 : null,
        acquires.getTotalCount() > 0 ? acquires.getValueAtPercentile(50) / 1000.0 : null,
        perOp == null ? null : perOp[0], perOp == null ? null : perOp[1], null, null,
        min == Long.MAX_VALUE ? 0 : min, max, timeouts, null, perProcess).withServerTime(perOp);
  }
}
