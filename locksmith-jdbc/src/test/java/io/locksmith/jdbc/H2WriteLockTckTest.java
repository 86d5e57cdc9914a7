package io.locksmith.jdbc;

import io.locksmith.LockClient;
import io.locksmith.tck.WriteLockTck;
import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.h2.H2Database;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The read-write lock contract (and the whole lock contract on its write side) on H2 (in memory). */
class H2WriteLockTckTest extends WriteLockTck {
  @RegisterExtension
  static final SharedTopology<H2Database> H2 = H2Database.shared();

  @Override
  protected LockClient newClient() {
    return JdbcLockClient.builder().dataSource(TestDatabases.pool(H2.get())).createTableIfMissing().build();
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
