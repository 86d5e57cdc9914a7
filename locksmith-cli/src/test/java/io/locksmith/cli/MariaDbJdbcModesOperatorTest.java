package io.locksmith.cli;

import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.mariadb.MariaDbServer;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The JDBC operator commands on MariaDB (one server for the class's JVM), every mode it offers. */
class MariaDbJdbcModesOperatorTest extends JdbcModesOperatorContract {
  @RegisterExtension
  static final SharedTopology<MariaDbServer> MARIADB = MariaDbServer.shared();

  @Override
  String url() {
    return MARIADB.get().jdbcUrl();
  }

  @Override
  DataSource dataSource() {
    return new UrlDataSource(MARIADB.get().jdbcUrl(), null, null);
  }

  @Override
  boolean endsSessions() {
    return false;
  }

  @Override
  String holderId() {
    return "MariaDB connection id ";
  }

  @Override
  String byHand() {
    return "KILL CONNECTION ";
  }
}
