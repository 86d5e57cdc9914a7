package io.locksmith.spring.integration;

import io.locksmith.jdbc.JdbcLockClient;
import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.h2.H2Database;
import java.time.Duration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/** The LockRegistry contract on Locksmith's JDBC backend over H2 (in memory): one client per registry. */
class H2RegistryContractTest extends LockRegistryContract {
  @RegisterExtension
  static final SharedTopology<H2Database> H2 = H2Database.shared();

  /**
   * The table, once: the cases run side by side, and H2 fails one of two concurrent {@code CREATE SEQUENCE
   * IF NOT EXISTS} ("object already exists") instead of skipping it.
   */
  @BeforeAll
  static void createTable() {
    JdbcLockClient.builder().dataSource(H2.get().dataSource()).createTableIfMissing().build().close();
  }

  @Override
  RenewableLockRegistry newRegistry(Duration ttl) {
    JdbcLockClient client = closeAfter(JdbcLockClient.builder().dataSource(H2.get().dataSource()).build());
    return ttl == null ? new LocksmithLockRegistry(client)
        : LocksmithLockRegistry.builder(client).fixedLease(ttl).build();
  }
}
