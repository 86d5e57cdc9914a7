package io.locksmith.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A short run under {@code partition-follower} (issue 23, item 13; the campaign of 20 runs is {@code
 * locksmith check}'s): the holder's ZooKeeper member is cut off from the leader while the holder's client
 * stays connected to it; the holder's lease reports itself lost before another client is granted its
 * lock. Leases (and sessions) of 1 s: the member answers reads for syncLimit × tick = 1 s after the cut,
 * so a holder that took those reads as proof of its session was told about a second late.
 *
 * <p>The run ends once the injection has healed and a lock was granted after it ({@link
 * CheckSettings.Builder#stopEarly}); the 45 s duration only bounds it.
 */
class ZooKeeperPartitionFollowerSmokeTest {
  private final PrintStream log = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void aHolderWhoseMemberIsCutFromTheLeaderIsToldBeforeAnotherClientIsGranted() throws Exception {
    CheckReport r = SafetyCheck.run(CheckSettings.builder(CheckBackend.ZOOKEEPER_ENSEMBLE, Fault.PARTITION_FOLLOWER)
        .duration(Duration.ofSeconds(45)).lease(Duration.ofSeconds(1), true).stopEarly(0, 1).build(), log);
    String json = r.toJson();
    // Not the whole verdict: a JVM the loaded host stalls past its lease lets the unfenced worker overlap
    // outside every fault window, which says nothing of this fault (the campaign in docs/safety.md judges
    // that, 20 runs). What the fix promises is checked below; the verdict counts the same late reports.
    assertThat(r.faultsInjected()).as(json).isPositive();
    assertThat(r.tokenRegressions()).as(json).isZero();
    Checkers.LossSignals loss = r.lossSignals();
    assertThat(loss.grantsAfterUnreleasedHold()).as("another client got the cut-off holder's lock: %s", json)
        .isPositive();
    assertThat(loss.lostAfter()).as("no holder told after the next grant: %s", json).isZero();
    assertThat(loss.lostBefore()).as("each time after the holder's onLost: %s", json)
        .isEqualTo(loss.grantsAfterUnreleasedHold());
    assertThat(loss.minMarginNanos()).as(json).isPositive();
  }
}
