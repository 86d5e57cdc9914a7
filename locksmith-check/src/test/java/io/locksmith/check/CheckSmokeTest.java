package io.locksmith.check;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The CI smoke of the checker: short real runs (embedded Redis, two client JVMs each) that prove both
 * directions: a clean run reports zeros, and the checker sees the violations that holder pauses force
 * without fencing, and fencing rejects the stale writes. Each run ends as soon as it has seen what it
 * needs ({@link CheckSettings.Builder#stopEarly}: a number of grants, or one healed pause); its duration
 * only bounds it. Long campaigns run from the CLI.
 */
class CheckSmokeTest {
  private final ByteArrayOutputStream logBytes = new ByteArrayOutputStream();
  private final PrintStream log = new PrintStream(logBytes, true, StandardCharsets.UTF_8);

  private String log() {
    return logBytes.toString(StandardCharsets.UTF_8);
  }

  @Test
  @Timeout(90)
  void withoutFaultsARedisRunReportsNoViolation() throws Exception {
    // Watched leases of 4 s: a lease is lost only if its renewals stall for about two thirds of it, and
    // in a run without faults a loss is an overlap. With 1 s leases a child JVM descheduled for ~0.7 s on
    // a loaded 2-core CI machine made one. The runs with faults (the self-test below) keep short leases,
    // and it is they that show the checker sees real violations.
    CheckReport r = SafetyCheck.run(CheckSettings.builder(CheckBackend.REDIS, Fault.NONE)
        .duration(Duration.ofSeconds(40)).lease(Duration.ofSeconds(4), true).stopEarly(100, 0).build(), log);
    assertThat(r.acquisitions()).as(log()).isGreaterThan(20);
    assertThat(r.overlaps()).as(log()).isZero();
    assertThat(r.lostUpdates()).isZero();
    assertThat(r.tokenRegressions()).isZero();
    assertThat(r.staleWritesAccepted()).isZero();
    assertThat(r.brokenPromises()).isEmpty();
    String json = r.toJson();
    for (String field : new String[] {"backend", "fault", "fenced", "durationMillis", "acquisitions", "overlaps",
        "maxOverlapMillis", "lostUpdates", "tokenRegressions", "staleWritesAccepted", "staleWritesRejected",
        "maxUnavailableMillis"}) {
      assertThat(json).contains("\"" + field + "\": ");
    }
    assertThat(json).contains("\"backend\": \"redis\"", "\"fault\": \"none\"", "\"fenced\": false");
    String html = r.toHtml();
    assertThat(html).contains("<svg", "Holds per client", "Fencing tokens").doesNotContain("<script", "src=", "href=");
  }

  @Test
  @Timeout(120)
  void theSelfTestSeesViolationsFromPausedHoldersAndFencingRejectsTheirStaleWrites() throws Exception {
    // one pause per run (as the 8 s runs this replaces made): a run that missed is retried by the self-test
    SafetyCheck.SelfTest t = SafetyCheck.selfTest(Duration.ofSeconds(30), 1, log);
    CheckReport unfenced = t.reports().get(0);
    CheckReport fenced = t.reports().get(1);
    assertThat(t.problems()).as(log()).isEmpty();
    assertThat(t.passed()).isTrue();
    assertThat(unfenced.settings().fenced()).isFalse();
    assertThat(unfenced.faultsInjected()).isPositive();
    assertThat(unfenced.overlaps()).isPositive();
    assertThat(unfenced.maxOverlapMillis()).isPositive();
    assertThat(unfenced.lostUpdates()).isPositive();
    assertThat(unfenced.staleWritesAccepted()).isPositive();
    assertThat(unfenced.checkerSawForcedViolation()).isTrue();
    assertThat(fenced.settings().fenced()).isTrue();
    assertThat(fenced.staleWritesRejected()).as(fenced.toTable()).isPositive();
    assertThat(fenced.staleWritesAccepted()).isZero();
    assertThat(fenced.lostUpdates()).isZero();
    assertThat(fenced.brokenPromises()).isEmpty();
  }

  @Test
  void unsupportedCombinationsAndBadSettingsFailAtBuild() {
    assertThatThrownBy(() -> CheckSettings.builder(CheckBackend.REDIS, Fault.KILL_MASTER).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("does not support fault kill-master")
        .hasMessageContaining("pause-holder");
    assertThatThrownBy(() -> CheckSettings.builder(CheckBackend.IN_JVM, Fault.PAUSE_HOLDER).build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> CheckSettings.builder(CheckBackend.REDIS, Fault.NONE).clients(1).build())
        .hasMessageContaining("at least processes");
    assertThatThrownBy(() -> CheckSettings.builder(CheckBackend.REDIS, Fault.NONE)
        .think(Duration.ZERO, Duration.ofSeconds(3)).build()).hasMessageContaining("think time");
    assertThatThrownBy(() -> Fault.parse("meteor")).hasMessageContaining("pause-holder");
    assertThatThrownBy(() -> CheckBackend.parse("etcd")).hasMessageContaining("redlock").hasMessageContaining("zookeeper-ensemble");
    assertThatThrownBy(() -> SafetyCheck.selfTest(Duration.ofSeconds(1), log)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> CheckSettings.builder(CheckBackend.REDIS, Fault.NONE).load(17).build())
        .hasMessageContaining("load must be in 0..16");
    assertThatThrownBy(() -> CheckSettings.builder(CheckBackend.REDIS, Fault.NONE).lease(Duration.ofMillis(500), true)
        .schedulingAllowance(Duration.ofMillis(250)).build()).hasMessageContaining("schedulingAllowance");
    assertThatThrownBy(() -> CheckSettings.builder(CheckBackend.REDIS, Fault.NONE)
        .schedulingAllowance(Duration.ofMillis(-1)).build()).hasMessageContaining("schedulingAllowance");
    CheckSettings loaded = CheckSettings.builder(CheckBackend.REDIS, Fault.NONE).load(2)
        .schedulingAllowance(Duration.ZERO).build();
    assertThat(loaded.toString()).contains("2 busy-loop threads").contains("scheduling allowance 0 ms");
    assertThat(loaded.mutate().build().schedulingAllowance()).hasValue(Duration.ZERO);
    assertThatThrownBy(() -> CheckSettings.builder(CheckBackend.REDIS, Fault.NONE).stopEarly(10, 1).build())
        .hasMessageContaining("needs a fault");
    assertThatThrownBy(() -> CheckSettings.builder(CheckBackend.REDIS, Fault.NONE).stopEarly(-1, 0).build())
        .hasMessageContaining("stopEarly acquisitions");
    CheckSettings early = CheckSettings.builder(CheckBackend.REDIS, Fault.PAUSE_HOLDER).stopEarly(5, 1).build();
    assertThat(early.stopsEarly()).isTrue();
    assertThat(early.mutate().build().stopAfterInjections()).isEqualTo(1);
    assertThat(early.toString()).contains("ends after 5 grants and 1 injections");
    assertThat(CheckSettings.builder(CheckBackend.REDIS, Fault.NONE).build().stopsEarly()).isFalse();
  }
}
