package io.locksmith.jdbc;

import io.locksmith.LockClient;
import io.locksmith.tck.WriteLockTck;
import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.mariadb.MariaDbServer;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The read-write lock contract (and the whole lock contract on its write side) on MariaDB (one server per test run). */
class MariaDbWriteLockTckTest extends WriteLockTck {
  @RegisterExtension
  static final SharedTopology<MariaDbServer> MARIADB = MariaDbServer.shared();

  @Override
  protected LockClient newClient() {
    return JdbcLockClient.builder().dataSource(TestDatabases.pool(MARIADB.get())).createTableIfMissing().build();
  }

  /** {@link EvictionByRenewal#LEASE}: overrides the TCK's {@code evictionCaseLease()} (no {@code @Override}: older TCKs lack it). */
  protected java.time.Duration evictionCaseLease() {
    return EvictionByRenewal.LEASE;
  }

  /** Found out at the next renewal, not told: {@link EvictionByRenewal#BOUND}. */
  @Override
  protected java.time.Duration evictionNoticeBound() {
    return EvictionByRenewal.BOUND;
  }
}
