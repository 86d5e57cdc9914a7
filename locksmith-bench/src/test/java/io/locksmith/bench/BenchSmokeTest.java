package io.locksmith.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Keeps the harness from rotting: every scenario runs briefly against real servers and produces the
 * JSON contract for every implementation. These are not measurements; the numbers are only checked to
 * be there and sane. Smoke runs ({@link BenchSettings#smoke}): windows of a few milliseconds that stay
 * open until every thread has completed a cycle in them, so every number is there however loaded the
 * machine is.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class BenchSmokeTest {
  /** The smoke runs' duration: 5 slices of 10 ms, plus a 10 ms warm-up and cost sample. */
  static final Duration SMOKE = Duration.ofMillis(50);

  @ParameterizedTest
  @CsvSource(delimiter = ';', value = {
      "uncontended; raw,redisson,redisson-fenced,spring; 0; locksmith,raw,redisson,redisson-fenced,spring",
      "many-keys; raw; 8; locksmith,raw",
      "hot-key; redisson,redisson-fair,spring; 4; locksmith,redisson,redisson-fair,spring",
      "herd; redisson; 24; locksmith,redisson",
      "redlock; raw,redisson; 0; locksmith,locksmith-redlock,raw,raw-quorum,raw-quorum-sequential,redisson,"
          + "redisson-redlock"})
  void everyScenarioReportsEveryImplementation(String scenario, String against, int threads, String expected)
      throws Exception {
    ByteArrayOutputStream progress = new ByteArrayOutputStream();
    BenchReport report = Bench.run(new BenchSettings(Scenario.parse(scenario), List.of(against.split(",")),
        Duration.ofSeconds(1), threads, null, List.of()).smoke(SMOKE, 1),
        new PrintStream(progress, true, StandardCharsets.UTF_8));

    assertThat(report.results()).extracting(BenchResult::impl).containsExactly(expected.split(","));
    for (BenchResult r : report.results()) {
      assertThat(r.opsPerSec()).as(r.impl() + " ops/s").isPositive();
      assertThat(r.p50Micros()).as(r.impl() + " p50").isPositive();
      assertThat(r.p99Micros()).as(r.impl() + " p99").isGreaterThanOrEqualTo(r.p50Micros());
      assertThat(r.serverCommandsPerOp()).as(r.impl() + " commands per cycle").isGreaterThanOrEqualTo(1.0);
    }
    BenchResult locksmith = report.results().get(0);
    if (scenario.equals("uncontended")) {
      assertThat(locksmith.serverCommandsPerOp()).as("acquire + release, nothing else").isEqualTo(2.0);
    }
    if (scenario.equals("hot-key") || scenario.equals("herd")) {
      assertThat(locksmith.minThreadOps()).as("no thread starved").isPositive();
      assertThat(locksmith.handoffP50Micros()).isNotNull();
    }
    String json = report.toJson();
    for (String field : List.of("\"scenario\": \"" + scenario + "\"", "\"results\"", "\"impl\"",
        "\"opsPerSec\"", "\"p50Micros\"", "\"p99Micros\"", "\"serverCommandsPerOp\"")) {
      assertThat(json).contains(field);
    }
  }

  /**
   * The server's own account (issue 27 item 4): every Redis implementation gets its server time and calls
   * per cycle from {@code INFO commandstats}, and the calls count what the implementation really sends.
   * raw: {@code SET} + the release script ({@code EVALSHA}) and its {@code GET} and {@code DEL} = 4;
   * fenced-minimal: 2 scripts + {@code SET} + {@code INCR} + {@code GET} + {@code DEL} = 6. One thread on
   * names that nobody else holds, so no acquire is ever retried and the counts are exact (the tolerance only
   * absorbs rounding). No timed assertion: the microseconds are only checked to be there.
   */
  @Test
  void theServerTimeColumnCountsEveryCallOnceIncludingThoseInsideScripts() throws Exception {
    ByteArrayOutputStream progress = new ByteArrayOutputStream();
    BenchReport report = Bench.run(new BenchSettings(Scenario.UNCONTENDED, List.of("raw", "fenced-minimal"),
        Duration.ofSeconds(1), 0, null, List.of()).smoke(SMOKE, 1),
        new PrintStream(progress, true, StandardCharsets.UTF_8));

    assertThat(report.results()).extracting(BenchResult::impl).containsExactly("locksmith", "raw", "fenced-minimal");
    for (BenchResult r : report.results()) {
      assertThat(r.serverMicrosPerOp()).as(r.impl() + " server µs per cycle").isNotNull().isPositive();
      assertThat(r.serverCallsPerOp()).as(r.impl() + " server calls per cycle").isNotNull()
          .isGreaterThanOrEqualTo(r.serverCommandsPerOp());
    }
    org.assertj.core.data.Offset<Double> rounding = org.assertj.core.data.Offset.offset(0.01);
    BenchResult raw = report.results().get(1);
    assertThat(raw.serverCommandsPerOp()).as("raw: SET and the release script").isCloseTo(2.0, rounding);
    assertThat(raw.serverCallsPerOp()).as("raw: SET, EVALSHA, GET, DEL").isCloseTo(4.0, rounding);
    BenchResult fenced = report.results().get(2);
    assertThat(fenced.serverCommandsPerOp()).as("fenced-minimal: two scripts").isCloseTo(2.0, rounding);
    assertThat(fenced.serverCallsPerOp()).as("fenced-minimal: 2 EVALSHA, SET, INCR, GET, DEL")
        .isCloseTo(6.0, rounding);
    assertThat(report.toJson()).contains("\"impl\": \"fenced-minimal\"", "\"serverMicrosPerOp\": ",
        "\"serverCallsPerOp\": 6.00");
    assertThat(report.toTable()).contains("srv µs/op", "calls/op");
  }

  /**
   * The read/write mix on one read-write lock: both sides are reported on their own, per thread, and
   * neither starves (issue 12 item 5: the readers used to, under a stream of writers). The exclusive
   * lock runs the same mix as a baseline, its one lock taken for reads too.
   */
  @Test
  void theReadWriteMixReportsBothSidesAndStarvesNeither() throws Exception {
    ByteArrayOutputStream progress = new ByteArrayOutputStream();
    BenchReport report = Bench.run(new BenchSettings(Scenario.RW_MIX, List.of("locksmith-rw"), Duration.ofSeconds(1),
        6, null, List.of(), Duration.ZERO, 0.5).smoke(SMOKE, 1), new PrintStream(progress, true, StandardCharsets.UTF_8));

    assertThat(report.readers()).isEqualTo(3);
    assertThat(report.results()).extracting(BenchResult::impl).containsExactly("locksmith", "locksmith-rw");
    for (BenchResult r : report.results()) {
      assertThat(r.sides()).as(r.impl() + " sides").isNotNull();
      for (BenchResult.Side side : List.of(r.sides().reads(), r.sides().writes())) {
        assertThat(side.threads()).isEqualTo(3);
        assertThat(side.minThreadOps()).as(r.impl() + ": no thread of a side starved").isPositive();
        assertThat(side.maxThreadOps()).isGreaterThanOrEqualTo(side.minThreadOps());
        assertThat(side.cycles()).isBetween(3 * side.minThreadOps(), 3 * side.maxThreadOps());
        assertThat(side.acquireMaxMicros()).isGreaterThanOrEqualTo(side.acquireP99Micros());
      }
      // over the same measured time (a smoke window may outlast its share of the duration)
      assertThat(r.sides().reads().perSec() + r.sides().writes().perSec())
          .as("the sides add up").isCloseTo(r.opsPerSec(), org.assertj.core.data.Offset.offset(1e-6 * r.opsPerSec()));
    }
    assertThat(report.toJson()).contains("\"scenario\": \"rw-mix\"", "\"readers\": 3", "\"reads\": {\"threads\": 3",
        "\"writes\": {\"threads\": 3", "\"acquireMaxMicros\"");
    assertThat(report.toTable()).contains("reads  3 thread(s)", "writes 3 thread(s)");
  }

  /**
   * With an added round trip, every acquire costs at least one; the sequential control at least three
   * (a majority of five, one after another). Lower bounds only: they hold on any machine, and they fail
   * if the delay is not on the path or the control asks in parallel.
   */
  @Test
  void anAddedRoundTripIsOnEveryLinkAndTheSequentialControlPaysItPerNode() throws Exception {
    ByteArrayOutputStream progress = new ByteArrayOutputStream();
    BenchReport report = Bench.run(new BenchSettings(Scenario.REDLOCK, List.of("raw"), Duration.ofSeconds(1), 0,
        null, List.of(), Duration.ofMillis(2)).smoke(SMOKE, 1), new PrintStream(progress, true, StandardCharsets.UTF_8));

    assertThat(report.rttMicros()).isEqualTo(2000);
    assertThat(report.toJson()).contains("\"rttMicros\": 2000");
    assertThat(report.results()).extracting(BenchResult::impl)
        .containsExactly("locksmith", "locksmith-redlock", "raw", "raw-quorum", "raw-quorum-sequential");
    for (BenchResult r : report.results()) {
      double roundTrips = r.impl().equals("raw-quorum-sequential") ? 3 : 1;
      assertThat(r.acquireP50Micros()).as(r.impl() + " acquire p50").isGreaterThanOrEqualTo(2000 * roundTrips);
      assertThat(r.serverCommandsPerOp()).as(r.impl() + " commands counted on the servers behind the proxies")
          .isGreaterThanOrEqualTo(2.0);
    }
  }

  /**
   * The segmented scenario runs each segment count on the same workload and reports the gain. The
   * ordering check is deliberately loose (4 segments must beat 1 when each sale holds its segment for
   * 5 ms): it fails if the segments do not run in parallel, and holds on a loaded machine.
   */
  @Test
  void theSegmentedScenarioComparesSegmentCountsInOneRun() throws Exception {
    ByteArrayOutputStream progress = new ByteArrayOutputStream();
    BenchReport report = Bench.run(new BenchSettings(Scenario.SEGMENTED, List.of(), Duration.ofSeconds(1), 8,
        null, List.of(), Duration.ZERO, BenchSettings.DEFAULT_READ_RATIO, List.of(1, 4), Duration.ofMillis(5))
        .smoke(Duration.ofMillis(250), 1), new PrintStream(progress, true, StandardCharsets.UTF_8));

    assertThat(report.results()).extracting(BenchResult::impl).containsExactly("segments-1", "segments-4");
    for (BenchResult r : report.results()) {
      assertThat(r.opsPerSec()).as(r.impl() + " sales/s").isPositive();
      assertThat(r.p99Micros()).as(r.impl() + " p99").isGreaterThanOrEqualTo(r.p50Micros());
      // a sale: read and write, and its grant and release, which are one command when a release hands the
      // segment's lock to a thread of the same client waiting for it (issue 16): at least 3
      assertThat(r.serverCommandsPerOp()).as(r.impl() + " commands per sale").isGreaterThanOrEqualTo(3.0);
      assertThat(r.p50Micros()).as(r.impl() + " a sale includes the 5 ms hold").isGreaterThanOrEqualTo(5000);
    }
    assertThat(report.results().get(1).opsPerSec()).as("4 segments sell faster than 1")
        .isGreaterThan(report.results().get(0).opsPerSec() * 1.5);
    assertThat(report.toTable()).contains("segments-4:").contains("× the sales per second of segments-1");
    assertThat(report.toJson()).contains("\"scenario\": \"segmented\"");
  }

  @Test
  void badSettingsAreRejected() {
    assertThatThrownBy(() -> Scenario.parse("everything")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("hot-key");
    assertThatThrownBy(() -> new BenchSettings(Scenario.HOT_KEY, List.of("curator"), Duration.ofSeconds(5), 0,
        null, List.of())).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("unknown peer");
    assertThatThrownBy(() -> new BenchSettings(Scenario.HOT_KEY, List.of(), Duration.ofMillis(10), 0,
        null, List.of())).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least 1s");
    assertThat(new BenchSettings(Scenario.HOT_KEY, List.of(), Duration.ofSeconds(1), 0, null, List.of())
        .smoke(Duration.ofMillis(10), 1).minCycles()).isEqualTo(1);
    assertThatThrownBy(() -> new BenchSettings(Scenario.HOT_KEY, List.of(), Duration.ofSeconds(1), 0, null,
        List.of()).smoke(Duration.ofMillis(9), 1)).hasMessageContaining("10ms with minCycles");
    assertThatThrownBy(() -> new BenchSettings(Scenario.HOT_KEY, List.of(), Duration.ofSeconds(1), 0, null,
        List.of()).smoke(Duration.ofSeconds(1), -1)).hasMessageContaining("minCycles");
    assertThatThrownBy(() -> new BenchSettings(Scenario.REDLOCK, List.of(), Duration.ofSeconds(5), 0,
        null, List.of(), Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("rtt");
    assertThatThrownBy(() -> new BenchSettings(Scenario.UNCONTENDED, List.of(), Duration.ofSeconds(5), 2,
        null, List.of(), Duration.ofMillis(1))).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("one thread");
    assertThatThrownBy(() -> new BenchSettings(Scenario.UNCONTENDED, List.of(), Duration.ofSeconds(1), 0,
        "rediss://127.0.0.1:6379", List.of(), Duration.ofMillis(1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("plain redis://");
    for (double ratio : new double[] {0, 1, -0.5, Double.NaN}) {
      assertThatThrownBy(() -> new BenchSettings(Scenario.RW_MIX, List.of(), Duration.ofSeconds(1), 0, null,
          List.of(), Duration.ZERO, ratio)).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("read ratio");
    }
    assertThatThrownBy(() -> new BenchSettings(Scenario.RW_MIX, List.of(), Duration.ofSeconds(1), 1, null,
        List.of())).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least 2 threads");
    assertThat(new BenchSettings(Scenario.RW_MIX, List.of(), Duration.ofSeconds(1), 2, null, List.of(),
        Duration.ZERO, 0.99).readers()).as("a writer is always left").isEqualTo(1);
    assertThat(new BenchSettings(Scenario.RW_MIX, List.of(), Duration.ofSeconds(1), 0, null, List.of())
        .readers()).as("8 threads, 0.8 read").isEqualTo(6);
    assertThatThrownBy(() -> new BenchSettings(Scenario.SEGMENTED, List.of(), Duration.ofSeconds(1), 0,
        null, List.of(), Duration.ZERO, BenchSettings.DEFAULT_READ_RATIO, List.of(1, 1), Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("segments");
    assertThatThrownBy(() -> new BenchSettings(Scenario.SEGMENTED, List.of(), Duration.ofSeconds(1), 0,
        null, List.of(), Duration.ZERO, BenchSettings.DEFAULT_READ_RATIO, List.of(0), Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("segments");
    assertThatThrownBy(() -> new BenchSettings(Scenario.SEGMENTED, List.of(), Duration.ofSeconds(1), 0,
        null, List.of(), Duration.ZERO, BenchSettings.DEFAULT_READ_RATIO, List.of(1), Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("hold");
  }

  /**
   * The hot key from several JVMs (issue 16): every child JVM runs every implementation, and the report
   * has each JVM's cycles, the per-thread spread over all of them, and their sum as the throughput.
   */
  // Not a smoke run: windows that wait for every thread would wait out the 2 s grace whenever a JVM's
  // threads keep an unfair lock (Spring's registry) from the other JVM's; fixed 200 ms windows, as measured.
  @Test
  void theHotKeyFromSeveralJvmsReportsEveryJvmAndThread() throws Exception {
    ByteArrayOutputStream progress = new ByteArrayOutputStream();
    BenchReport report = Bench.run(new BenchSettings(Scenario.HOT_KEY, List.of("spring"), Duration.ofSeconds(1), 2,
        null, List.of(), Duration.ZERO, BenchSettings.DEFAULT_READ_RATIO, BenchSettings.DEFAULT_SEGMENTS,
        BenchSettings.DEFAULT_HOLD, 2), new PrintStream(progress, true, StandardCharsets.UTF_8));

    assertThat(report.processes()).isEqualTo(2);
    assertThat(report.results()).extracting(BenchResult::impl).containsExactly("locksmith", "spring");
    for (BenchResult r : report.results()) {
      assertThat(r.processOps()).as(r.impl() + " cycles per JVM").hasSize(2);
      assertThat(r.minProcessOps()).as(r.impl() + ": no JVM starved").isPositive();
      assertThat(r.minThreadOps()).as(r.impl() + ": no thread starved").isPositive();
      assertThat(r.maxThreadOps()).isGreaterThanOrEqualTo(r.minThreadOps());
      // every JVM's count lies between two of its threads' extremes
      for (long perJvm : r.processOps()) {
        assertThat(perJvm).isBetween(2 * r.minThreadOps(), 2 * r.maxThreadOps());
      }
      assertThat(r.opsPerSec()).isPositive();
      assertThat(r.serverCommandsPerOp()).as(r.impl() + " commands per cycle").isGreaterThanOrEqualTo(1.0);
      assertThat(r.handoffP50Micros()).as("not measurable across JVMs").isNull();
    }
    String json = report.toJson();
    assertThat(json).contains("\"processes\": 2", "\"processOps\": [", "\"minProcessOps\"");
    assertThat(report.toTable()).contains("2 JVMs × 2 thread(s)", "cycles per JVM");
  }

  /** Adding the JVMs up: sums, the spread over every thread, percentiles over every cycle, a round trip. */
  @Test
  void workerReportsAddUp() {
    org.HdrHistogram.Histogram fast = new org.HdrHistogram.Histogram(3);
    for (int i = 0; i < 99; i++) {
      fast.recordValue(100_000); // 100 µs
    }
    org.HdrHistogram.Histogram slow = new org.HdrHistogram.Histogram(3);
    slow.recordValue(10_000_000); // 10 ms
    WorkerReport a = WorkerReport.decode(new WorkerReport(60, 0, 2_000_000_000L, new long[] {25, 35}, fast, fast)
        .encode());
    WorkerReport b = new WorkerReport(40, 1, 2_000_000_000L, new long[] {10, 30}, slow, slow);
    assertThat(a.perThread()).containsExactly(25, 35);
    assertThat(a.cycles().getTotalCount()).isEqualTo(99);

    BenchResult r = WorkerReport.aggregate("x", List.of(a, b), new double[] {3.0, 1.0});

    assertThat(r.opsPerSec()).isEqualTo(50.0); // 100 cycles in the same 2 s windows
    assertThat(r.processOps()).containsExactly(60L, 40L);
    assertThat(r.minProcessOps()).isEqualTo(40);
    assertThat(r.maxProcessOps()).isEqualTo(60);
    assertThat(r.minThreadOps()).isEqualTo(10);
    assertThat(r.maxThreadOps()).isEqualTo(35);
    assertThat(r.abandonedWaits()).isEqualTo(1);
    assertThat(r.p50Micros()).isCloseTo(100.0, org.assertj.core.data.Offset.offset(1.0));
    assertThat(r.p99Micros()).isCloseTo(100.0, org.assertj.core.data.Offset.offset(1.0));
    assertThat(r.serverCommandsPerOp()).isEqualTo(3.0);
    assertThatThrownBy(() -> WorkerReport.decode("1 2 3")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> WorkerReport.aggregate("x", List.of(), null)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void severalProcessesOnlyForTheHotKey() {
    assertThatThrownBy(() -> new BenchSettings(Scenario.MANY_KEYS, List.of(), Duration.ofSeconds(1), 0, null,
        List.of(), Duration.ZERO, 0.8, List.of(1), Duration.ZERO, 2)).hasMessageContaining("hot-key");
    assertThatThrownBy(() -> new BenchSettings(Scenario.HOT_KEY, List.of(), Duration.ofSeconds(1), 0, null,
        List.of(), Duration.ZERO, 0.8, List.of(1), Duration.ZERO, 0)).hasMessageContaining("processes");
    assertThatThrownBy(() -> new BenchSettings(Scenario.HOT_KEY, List.of(), Duration.ofSeconds(1), 0, null,
        List.of(), Duration.ZERO, 0.8, List.of(1), Duration.ZERO, 17)).hasMessageContaining("processes");
  }
}
