package io.locksmith.bench;

import java.util.Locale;

/** The workloads {@code locksmith bench} runs; see {@code docs/benchmarks.md}. */
public enum Scenario {
  /** One thread, acquire + release on rotating names: latency of an uncontended cycle. */
  UNCONTENDED(1),
  /** 64 threads on distinct names: cycles per second when nothing contends. */
  MANY_KEYS(64),
  /** Several threads on one name: cycles per second, hand-off latency, fairness. */
  HOT_KEY(8),
  /** Very many waiters on one name: server commands and wake-ups per hand-off. */
  HERD(1000),
  /** One thread, uncontended, on five independent nodes against one: the cost of a quorum. */
  REDLOCK(1),
  /**
   * Several threads on one read-write lock, a share of them only reading and the rest only writing
   * ({@link BenchSettings#readRatio()}): cycles and per-thread counts of each side, and each side's
   * longest wait. Peers without a read side take their one lock for reads too.
   */
  RW_MIX(8),
  /**
   * 64 threads selling one hot item through {@code SegmentedStock}, once per segment count (1 = one lock
   * over the whole stock): sales per second and the gain of segmenting.
   */
  SEGMENTED(64);

  final int defaultThreads;

  Scenario(int defaultThreads) {
    this.defaultThreads = defaultThreads;
  }

  /** @return the name used on the command line and in JSON, e.g. {@code many-keys} */
  public String cliName() {
    return name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  /**
   * @param name a {@link #cliName()}
   * @return the scenario
   * @throws IllegalArgumentException if there is none of that name
   */
  public static Scenario parse(String name) {
    for (Scenario s : values()) {
      if (s.cliName().equals(name)) {
        return s;
      }
    }
    throw new IllegalArgumentException("unknown scenario '" + name + "'; one of uncontended, many-keys, "
        + "hot-key, herd, redlock, rw-mix, segmented");
  }
}
