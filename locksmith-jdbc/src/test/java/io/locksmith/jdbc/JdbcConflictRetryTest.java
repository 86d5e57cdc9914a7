package io.locksmith.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.Lease;
import io.locksmith.testkit.h2.H2Database;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * A conflict reported by the database (here H2's lock timeout, {@code HYT00}, while another transaction
 * holds the lock row) is retried within the acquisition's wait and never surfaced: not as a grant, not as
 * an outage. The conflicting transaction outlives several command timeouts; the waiting acquisition is
 * granted once it ends, and one that does not wait is simply not granted.
 */
class JdbcConflictRetryTest {

  @Test
  void lockTimeoutsAreRetriedWithinTheWait() throws Exception {
    try (H2Database h2 = H2Database.inMemory()) {
      org.h2.jdbcx.JdbcDataSource ds = new org.h2.jdbcx.JdbcDataSource();
      ds.setURL(h2.jdbcUrl() + ";LOCK_TIMEOUT=100");
      ds.setUser("sa");
      try (JdbcLockClient client = JdbcLockClient.builder().dataSource(ds).commandTimeout(Duration.ofMillis(300))
          .createTableIfMissing().build()) {
        client.lock("contended").acquire().release(); // the row exists, free
        Connection blocker = ds.getConnection();
        blocker.setAutoCommit(false);
        try (PreparedStatement ps = blocker.prepareStatement(
            "SELECT * FROM locksmith_locks WHERE lock_name = 'contended' FOR UPDATE")) {
          ps.executeQuery().close(); // the lock row is locked by a transaction that is not ours
        }
        assertThat(client.lock("contended").tryAcquire()).as("no wait: not granted, no exception").isEmpty();
        CompletableFuture<Optional<Lease>> waiting = client.lock("contended").tryAcquireAsync(Duration.ofSeconds(10))
            .toCompletableFuture();
        // four command timeouts of conflicts: the acquisition neither fails nor is granted, it keeps trying
        assertThatThrownBy(() -> waiting.get(1200, TimeUnit.MILLISECONDS)).isInstanceOf(TimeoutException.class);
        blocker.rollback();
        blocker.close();
        Optional<Lease> lease = waiting.get(15, TimeUnit.SECONDS);
        assertThat(lease).as("granted once the conflicting transaction ended").isPresent();
        lease.get().release();
      }
    }
  }
}
