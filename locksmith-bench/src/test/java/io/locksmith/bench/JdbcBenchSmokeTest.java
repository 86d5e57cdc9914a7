package io.locksmith.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code bench --backend postgres}, briefly: both implementations measured on one database, no timeouts. */
class JdbcBenchSmokeTest {
  @Test
  @Timeout(180)
  void locksmithAndSpringsJdbcLockRegistryAreMeasuredSideBySide() throws Exception {
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    for (Scenario scenario : List.of(Scenario.UNCONTENDED, Scenario.HOT_KEY)) {
      List<String> against = new java.util.ArrayList<>(JdbcBench.PEERS);
      if (scenario == Scenario.HOT_KEY) {
        against.add(JdbcBench.ONE_CLIENT); // also one client (resp. registry) shared by the threads
      }
      BenchReport report = JdbcBench.run("postgres", new BenchSettings(scenario, List.of(), Duration.ofSeconds(2), 0,
          null, List.of()).smoke(BenchSmokeTest.SMOKE, 1), against, new PrintStream(log, true,
          StandardCharsets.UTF_8));
      String table = report.toTable();
      assertThat(report.results()).extracting(BenchResult::impl).containsExactlyElementsOf(
          scenario == Scenario.HOT_KEY // ShedLock never waits
              ? List.of("locksmith-jdbc", "locksmith-jdbc-1c", "spring-jdbc", "spring-jdbc-1c")
              : List.of("locksmith-jdbc", "spring-jdbc", "shedlock-jdbc"));
      assertThat(report.results()).as(table).allSatisfy(r -> {
        assertThat(r.opsPerSec()).isPositive();
        assertThat(r.abandonedWaits()).isZero();
      });
      assertThat(table).contains("PostgreSQL 17").doesNotContain("Redis PostgreSQL");
    }
    assertThatThrownBy(() -> JdbcBench.run("postgres", new BenchSettings(Scenario.HERD, List.of(),
        Duration.ofSeconds(1), 0, null, List.of()), JdbcBench.PEERS, System.out))
        .isInstanceOf(IllegalArgumentException.class);
  }

  /** A single waiter behind a holder that releases once: notified, not polled. */
  @Test
  @Timeout(180)
  void aSingleWaiterIsHandedTheLockFasterThanTheRegistrysPolling() throws Exception {
    JdbcBench.HandOffReport report = JdbcBench.handOff("postgres", 5, System.out);
    JdbcBench.HandOff ours = report.results().get(0);
    JdbcBench.HandOff theirs = report.results().get(1);
    assertThat(ours.impl()).isEqualTo("locksmith-jdbc");
    assertThat(theirs.impl()).isEqualTo("spring-jdbc");
    // real time is what this measures: the registry retries every 100 ms, so its median hand-off is tens of
    // ms; a notified waiter needs a NOTIFY and a grant, about 1 ms on loopback. A median of a whole retry
    // period (100 ms) would mean the waiter was not notified but polled. Below that, the figure is the
    // host's scheduling delay: on these two cores under a parallel build it was 65 ms against the
    // registry's 96 ms in the same run, so the bound is the retry period and the registry's own median,
    // never a fixed share of it (that is the bench's job, on a quiet machine).
    assertThat(ours.p50Micros()).as(report.table()).isLessThan(100_000).isLessThan(theirs.p50Micros());
    assertThat(report.toJson()).contains("\"scenario\": \"hand-off\"", "\"rounds\": 5",
        "{\"impl\": \"locksmith-jdbc\", \"p50Micros\": " + ours.p50Micros());
  }

  @Test
  @Timeout(180)
  void onMariaDbToo() throws Exception {
    BenchReport report = JdbcBench.run("mariadb", new BenchSettings(Scenario.UNCONTENDED, List.of(),
        Duration.ofSeconds(2), 0, null, List.of()).smoke(BenchSmokeTest.SMOKE, 1), JdbcBench.PEERS, System.out);
    assertThat(report.results()).extracting(BenchResult::impl)
        .containsExactly("locksmith-jdbc", "spring-jdbc", "shedlock-jdbc");
    assertThat(report.results()).allSatisfy(r -> assertThat(r.opsPerSec()).isPositive());
    assertThat(report.toTable()).contains("MariaDB 10.11.5");
  }
}
