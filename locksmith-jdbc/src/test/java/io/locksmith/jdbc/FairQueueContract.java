package io.locksmith.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.ClientOptions;
import io.locksmith.Lease;
import io.locksmith.LockOptions;
import io.locksmith.spi.AcquireMode;
import io.locksmith.spi.AcquireReply;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The JDBC fair lock's queue as stored (what the TCK does not see): places strictly ordered by the
 * database even within one millisecond, a dead waiter's place that blocks nobody past its expiry, and
 * tokens from the exclusive lock's sequence. Each test works in a namespace of its own.
 */
abstract class FairQueueContract {
  private static final Duration PLACE_TIMEOUT = Duration.ofMillis(1500);
  private final String namespace = "fq" + UUID.randomUUID().toString().substring(0, 8);
  private final List<JdbcLockClient> clients = new ArrayList<>();

  abstract DataSource dataSource();

  @AfterEach
  void close() {
    clients.forEach(JdbcLockClient::close);
  }

  private JdbcLockClient client() {
    return client(PLACE_TIMEOUT);
  }

  private JdbcLockClient client(Duration placeTimeout) {
    JdbcLockClient c = JdbcLockClient.builder().dataSource(dataSource()).createTableIfMissing()
        .fairQueueTimeout(placeTimeout).options(ClientOptions.builder().namespace(namespace).build()).build();
    clients.add(c);
    return c;
  }

  /** One attempt straight through the backend, as a waiter that may never come back. */
  private static AcquireReply attempt(JdbcLockClient client, String name, String owner, String waiterId) {
    return client.backend().fair.acquire(name, owner, 30_000, AcquireMode.NEW, waiterId).toCompletableFuture().join();
  }

  @Test
  void placesAreStrictlyOrderedByArrivalEvenWithinOneMillisecond() throws Exception {
    JdbcLockClient a = client(Duration.ofMinutes(1)); // the places must outlive the test on a loaded machine
    Lease held = a.fairLock("q").acquire();
    List<String> arrivals = new ArrayList<>();
    for (int i = 0; i < 8; i++) { // back to back: several land in one millisecond of the database clock
      String waiter = a.clientId() + ":ghost" + i;
      assertThat(attempt(a, "q", "owner" + i, waiter).granted()).isFalse();
      arrivals.add(waiter);
    }
    List<String> order = new ArrayList<>();
    List<Long> since = new ArrayList<>();
    try (Connection c = dataSource().getConnection(); PreparedStatement ps = c.prepareStatement("SELECT waiter_id,"
        + " since FROM locksmith_locks_waiters WHERE namespace = ? AND kind = 'F' AND lock_name = 'q' ORDER BY since")) {
      ps.setString(1, namespace);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          order.add(rs.getString(1));
          since.add(rs.getLong(2));
        }
      }
    }
    assertThat(order).as("queue order").containsExactlyElementsOf(arrivals);
    for (int i = 1; i < since.size(); i++) {
      assertThat(since.get(i)).as("place %d after place %d", i, i - 1).isGreaterThan(since.get(i - 1));
    }
    assertThat(a.fairLock("q").inspect()).hasValueSatisfying(i -> assertThat(i.waiters()).isEqualTo(8));
    held.release();
  }

  @Test
  void aDeadWaitersPlaceBlocksTheQueueUntilItExpiresAndNoLonger() throws Exception {
    JdbcLockClient a = client();
    JdbcLockClient b = client();
    JdbcLockClient gone = client();
    Lease held = a.fairLock("d").acquire();
    // a waiter that takes its place and dies without a word: its client closes, nobody cancels the place
    assertThat(attempt(gone, "d", gone.clientId() + ":dead", gone.clientId() + ":w-dead").granted()).isFalse();
    gone.close();
    held.release();
    // free, but the dead waiter is first in line while its place lasts: no barging past it
    assertThat(b.fairLock("d").tryAcquire()).isEmpty();
    assertThat(a.fairLock("d").tryAcquire()).isEmpty();
    // a waiter behind it re-checks when the dead place expires (by the database clock), woken by nobody
    Optional<Lease> next = b.fairLock("d", LockOptions.watched(Duration.ofSeconds(30)))
        .tryAcquire(Duration.ofSeconds(20));
    assertThat(next).as("granted once the dead waiter's place expired").isPresent();
    assertThat(next.get().fencingToken()).isGreaterThan(held.fencingToken());
    assertThat(b.fairLock("d").inspect()).hasValueSatisfying(i -> assertThat(i.waiters()).isZero());
    next.get().release();
  }

  @Test
  void purgeDeletesIdleFairRowsButNotOnesWithAQueueOrAHolder() throws Exception {
    JdbcLockClient a = client();
    long first;
    try (Lease idle = a.fairLock("p-idle").acquire()) {
      first = idle.fencingToken();
    }
    // free, with a live place: a waiter of a client that is gone, whose place lasts a minute
    JdbcLockClient gone = client(Duration.ofMinutes(1));
    Lease before = a.fairLock("p-queued").acquire();
    assertThat(attempt(gone, "p-queued", "ghost", gone.clientId() + ":ghost").granted()).isFalse();
    gone.close();
    before.release();
    Lease held = a.fairLock("p-held").acquire();
    assertThat(a.backend().purgeExpired(Duration.ZERO).join()).isPositive();
    assertThat(fairRows()).as("rows kept").containsExactlyInAnyOrder("p-queued", "p-held");
    try (Lease again = a.fairLock("p-idle").acquire()) {
      assertThat(again.fencingToken()).as("a purged name's next token").isGreaterThan(first);
    }
    held.release();
  }

  private List<String> fairRows() throws Exception {
    List<String> names = new ArrayList<>();
    try (Connection c = dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(
        "SELECT lock_name FROM locksmith_locks WHERE namespace = ? AND kind = 'F'")) {
      ps.setString(1, namespace);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          names.add(rs.getString(1));
        }
      }
    }
    return names;
  }

  @Test
  void tokensComeFromTheExclusiveLocksSequence() throws Exception {
    JdbcLockClient a = client();
    long exclusive;
    try (Lease l = a.lock("t").acquire()) {
      exclusive = l.fencingToken();
    }
    long fair;
    try (Lease f = a.fairLock("t").acquire()) {
      fair = f.fencingToken();
    }
    assertThat(fair).as("a fair grant after an exclusive one, same name").isGreaterThan(exclusive);
    try (Lease f = a.fairLock("t").acquire()) {
      assertThat(f.fencingToken()).as("the next fair grant").isGreaterThan(fair);
      fair = f.fencingToken();
    }
    try (Lease l = a.lock("u").acquire()) {
      assertThat(l.fencingToken()).isGreaterThan(fair);
    }
  }
}
