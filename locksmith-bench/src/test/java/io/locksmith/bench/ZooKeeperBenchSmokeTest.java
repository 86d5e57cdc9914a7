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

/**
 * Keeps {@code bench --backend zookeeper} from rotting: a short hot-key run on an embedded server reports
 * Locksmith and both peers (Curator's mutex, Spring Integration's registry), nobody starved, with the
 * server's counters read. Not a measurement.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ZooKeeperBenchSmokeTest {

  @Test
  void aHotKeyRunReportsLocksmithCuratorAndSpring() throws Exception {
    ByteArrayOutputStream progress = new ByteArrayOutputStream();
    BenchReport report = ZooKeeperBench.run(new BenchSettings(Scenario.HOT_KEY, List.of(), Duration.ofSeconds(1), 4,
        null, List.of()).smoke(BenchSmokeTest.SMOKE, 1), ZooKeeperBench.PEERS,
        new PrintStream(progress, true, StandardCharsets.UTF_8));

    assertThat(report.results()).extracting(BenchResult::impl).containsExactly("locksmith", "curator", "spring-zk");
    for (BenchResult r : report.results()) {
      assertThat(r.opsPerSec()).as(r.impl() + " ops/s").isPositive();
      assertThat(r.minThreadOps()).as(r.impl() + ": no thread starved").isPositive();
      assertThat(r.serverCommandsPerOp()).as(r.impl() + " requests per cycle").isGreaterThanOrEqualTo(1.0);
    }
    assertThat(progress.toString(StandardCharsets.UTF_8)).contains("server cost spring-zk");
    assertThatThrownBy(() -> ZooKeeperBench.run(new BenchSettings(Scenario.HOT_KEY, List.of(), Duration.ofSeconds(1),
        4, null, List.of()), List.of("zookeeper-registry"), new PrintStream(progress, true, StandardCharsets.UTF_8)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("spring-zk");
  }
}
