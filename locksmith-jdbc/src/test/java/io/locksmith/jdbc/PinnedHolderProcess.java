package io.locksmith.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import io.locksmith.Lease;
import io.locksmith.LockOptions;
import java.time.Duration;

/**
 * A child JVM for {@link PinnedLockKillTest}: takes a lock in a pinned-connection mode with a 30 s
 * watched lease, prints {@code HELD <token>} and holds it until killed or its stdin closes. Arguments:
 * JDBC URL, user, mode, lock name.
 */
final class PinnedHolderProcess {
  private PinnedHolderProcess() {}

  public static void main(String[] args) throws Exception {
    try (HikariDataSource pool = TestDatabases.newPool(args[0], args[1], 4);
        JdbcLockClient client = JdbcLockClient.builder().dataSource(pool).mode(JdbcLockMode.valueOf(args[2]))
            .createTableIfMissing().build()) {
      Lease lease = client.lock(args[3], LockOptions.watched(Duration.ofSeconds(30))).acquire(Duration.ofSeconds(30));
      System.out.println("HELD " + lease.fencingToken());
      System.out.flush();
      while (System.in.read() >= 0) {
        // hold until the parent closes our stdin (or kills us, which is the point)
      }
    }
  }
}
