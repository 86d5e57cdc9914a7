package io.locksmith.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.ClientOptions;
import java.time.Duration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The ZooKeeper backend's loss bound takes the same margin as every other backend's leases: the
 * clock-drift allowance plus the scheduling allowance ({@link ClientOptions#validityMarginFor}), so its
 * holders too are told before the server can expire their session. No server needed.
 */
@Tag("unit")
class SessionLossMarginTest {
  private static final Duration SESSION = Duration.ofSeconds(15);
  private static final Duration TICK = Duration.ofMillis(200);

  @Test
  void theLossDeadlineIsLastProofPlusTimeoutLessHalfATickLessDriftLessAllowance() {
    ClientOptions options = ClientOptions.builder().schedulingAllowance(Duration.ofMillis(40)).build();
    Sessions sessions = new Sessions(SESSION, options::validityMarginFor, TICK);
    sessions.learn(7, (int) SESSION.toMillis());
    long proof = 1_000_000_000L;
    sessions.proof(7, proof);
    // half of the 200 ms tick, 15 s × 1 % + 2 ms = 152 ms of drift, 40 ms of scheduling allowance
    assertThat(sessions.bound(7).until()).isEqualTo(proof + SESSION.toNanos() - Duration.ofMillis(292).toNanos());
    Sessions byDefault = new Sessions(SESSION, ClientOptions.defaults()::validityMarginFor, TICK);
    byDefault.learn(7, (int) SESSION.toMillis());
    byDefault.proof(7, proof);
    assertThat(byDefault.bound(7).until()).as("default: 100 ms + 152 ms + 50 ms")
        .isEqualTo(proof + SESSION.toNanos() - Duration.ofMillis(302).toNanos());
  }

  @Test
  void aSessionTimeoutNotLongerThanDriftPlusAllowanceIsRefusedBeforeConnecting() {
    ClientOptions options = ClientOptions.builder().schedulingAllowance(Duration.ofMillis(100)).build();
    assertThatThrownBy(() -> ZooKeeperLockClient.builder().uri("zookeeper://127.0.0.1:1").options(options)
        .sessionTimeout(Duration.ofMillis(100)).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("sessionTimeout PT0.1S is not longer than")
        .hasMessageContaining("schedulingAllowance PT0.1S");
  }
}
