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
 * database restarts keeps its tokens increasing; a PostgreSQL run with late replies has no overlap. The long campaigns (pause-holder fenced and unfenced)
 * run from the CLI; docs/safety.md has their figures and commands.
 */
class JdbcCheckSmokeTest {
  private final ByteArrayOutputStream logBytes = new ByteArrayOutputStream();
  private final PrintStream log = new PrintStream(logBytes, true, StandardCharsets.UTF_8);

  /**
   * Watched leases of runs without faults: a lease is lost only if its renewals stall for about two
   * thirds of it, and in a run without faults a loss is an overlap. With 1 s leases a child JVM
   * descheduled for ~0.7 s on a loaded 2-core CI machine made one.
   */
  private static final Duration NO_FAULT_LEASE = Duration.ofSeconds(4);
  /** Watched leases of the restart run: short, so that the restart outlives them. */
  private static final Duration FAULT_LEASE = Duration.ofSeconds(1);
  /**
   * Grants a run without faults waits for before it ends; a run with a fault waits for 21 and its
   * injection. Counts, not time, so that a loaded host makes a run slower, never thinner: each run
   * exercises the lock more than the 20 times asserted below.
   */
  private static final int GRANTS = 50;
  /** The most a run lasts; it ends much sooner, once it has seen what it needs. */
  private static final Duration BOUND = Duration.ofSeconds(45);

  /**
   * A fenced run that ends once it has seen its grants and, with a fault, one healed injection followed
   * by a grant ({@link CheckSettings.Builder#stopEarly}); the duration only bounds it.
   */
  private CheckReport clean(CheckBackend backend, Fault fault, Duration lease) throws Exception {
    CheckReport r = SafetyCheck.run(CheckSettings.builder(backend, fault).fenced(true)
        .duration(BOUND).lease(lease, true).stopEarly(fault == Fault.NONE ? GRANTS : 21, fault == Fault.NONE ? 0 : 1).build(), log);
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
      CheckReport r = clean(backend, Fault.NONE, NO_FAULT_LEASE);
      assertThat(r.overlaps()).as(backend + "\n" + r.toTable()).isZero();
      assertThat(r.lostUpdates()).as(backend + "").isZero();
      assertThat(r.staleWritesAccepted()).as(backend + "").isZero();
      log.println(r.toTable());
    }
  }

  /**
   * Issue 23 item 27a, the CI part: a client JVM's replies held back past the command timeout grant no
   * second holder. (Before the fix the late replies' give-backs freed locks under HELD leases: 114 and 250
   * overlaps in two 30 s runs; the campaign figures are in docs/safety.md.)
   */
  @Test
  @Timeout(120)
  void lateRepliesGrantNoSecondHolder() throws Exception {
    CheckReport r = clean(CheckBackend.POSTGRES, Fault.LATE_REPLY, Duration.ofSeconds(2));
    assertThat(r.faultsInjected()).isPositive();
    assertThat(r.overlaps()).as(r.toTable()).isZero();
    assertThat(r.lostUpdates()).isZero();
    assertThat(r.staleWritesAccepted()).isZero();
  }

  @Test
  @Timeout(120)
  void aPostgresRestartLosesNoToken() throws Exception {
    CheckReport r = clean(CheckBackend.POSTGRES, Fault.RESTART_SERVER, FAULT_LEASE);
    assertThat(r.faultsInjected()).isPositive();
    assertThat(r.lostUpdates()).as(r.toTable()).isZero();
    assertThat(r.staleWritesAccepted()).isZero();
  }
}
