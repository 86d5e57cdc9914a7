package io.locksmith.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The checker on the JDBC backend (issue 15 acceptance 3, the CI part): without faults, PostgreSQL,
 * MariaDB and H2 runs report zero overlaps, lost updates and token regressions; a PostgreSQL run whose
 * database restarts keeps its tokens increasing. The long campaigns (pause-holder fenced and unfenced)
 * run from the CLI; docs/safety.md has their figures and commands.
 */
class JdbcCheckSmokeTest {
  private final ByteArrayOutputStream logBytes = new ByteArrayOutputStream();
  private final PrintStream log = new PrintStream(logBytes, true, StandardCharsets.UTF_8);

  private CheckReport clean(CheckBackend backend, Fault fault, Duration duration) throws Exception {
    CheckReport r = SafetyCheck.run(CheckSettings.builder(backend, fault).fenced(true)
        .duration(duration).lease(Duration.ofSeconds(1), true).build(), log);
    String why = logBytes.toString(StandardCharsets.UTF_8) + r.toTable();
    assertThat(r.acquisitions()).as(why).isGreaterThan(20);
    assertThat(r.tokenRegressions()).as(why).isZero();
    assertThat(r.brokenPromises()).as(why).isEmpty();
    return r;
  }

  @Test
  @Timeout(120)
  void withoutFaultsEveryDialectReportsNoViolation() throws Exception {
    for (CheckBackend backend : new CheckBackend[] {CheckBackend.POSTGRES, CheckBackend.MARIADB, CheckBackend.H2}) {
      CheckReport r = clean(backend, Fault.NONE, Duration.ofSeconds(5));
      assertThat(r.overlaps()).as(backend + "\n" + r.toTable()).isZero();
      assertThat(r.lostUpdates()).as(backend + "").isZero();
      assertThat(r.staleWritesAccepted()).as(backend + "").isZero();
      log.println(r.toTable());
    }
  }

  @Test
  @Timeout(120)
  void aPostgresRestartLosesNoToken() throws Exception {
    CheckReport r = clean(CheckBackend.POSTGRES, Fault.RESTART_SERVER, Duration.ofSeconds(10));
    assertThat(r.faultsInjected()).isPositive();
    assertThat(r.lostUpdates()).as(r.toTable()).isZero();
    assertThat(r.staleWritesAccepted()).isZero();
  }
}
