package io.locksmith.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.h2.H2Database;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The JDBC operator commands on H2 (in-memory, one database for the class's JVM), every mode it offers. */
class H2JdbcModesOperatorTest extends JdbcModesOperatorContract {
  @RegisterExtension
  static final SharedTopology<H2Database> H2 = H2Database.shared();

  @Override
  String url() {
    return H2.get().jdbcUrl() + ";USER=sa";
  }

  @Override
  DataSource dataSource() {
    return H2.get().dataSource();
  }

  @Override
  boolean endsSessions() {
    return false;
  }

  @Override
  String holderId() {
    return "H2 session id ";
  }

  @Override
  String byHand() {
    return "CALL ABORT_SESSION(";
  }

  @Test
  void aModeTheDatabaseLacksIsAUsageErrorNamingItsModes() {
    assertThat(run("inspect", "--mode", "advisory", "x")).isEqualTo(2);
    assertThat(err()).contains("no --mode advisory", "its modes are lease, row-lock");
    assertThat(run("list", "--mode", "row-lock", "--kind", "semaphore")).isEqualTo(2);
    assertThat(err()).contains("exclusive locks only");
    assertThat(run("inspect", "--mode", "queue", "x")).isEqualTo(2);
    assertThat(err()).contains("--mode must be one of lease, row-lock, advisory");
  }
}
