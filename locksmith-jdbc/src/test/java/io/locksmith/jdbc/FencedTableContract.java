package io.locksmith.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.Lease;
import io.locksmith.LockOptions;
import io.locksmith.StaleTokenException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link JdbcFencedTable} on a real database, with tokens from real leases: a stale holder is refused at
 * its first access (the read), distinctly from a missing row; an admitted holder keeps the next holder
 * out of the row until it commits, so no update is lost. Subclasses give the database.
 */
abstract class FencedTableContract {
  private String table;
  private JdbcFencedTable fenced;
  private JdbcLockClient locks;
  private long older;
  private long newer;

  abstract DataSource dataSource();

  @BeforeEach
  void setUp() throws Exception {
    table = "inventory_" + Long.toHexString(System.nanoTime());
    exec("CREATE TABLE " + table + " (id BIGINT PRIMARY KEY, stock INT NOT NULL, fence BIGINT NOT NULL DEFAULT 0)");
    exec("INSERT INTO " + table + " (id, stock) VALUES (42, 10)");
    fenced = JdbcFencedTable.of(table, "id", "fence");
    locks = JdbcLockClient.builder().dataSource(dataSource()).createTableIfMissing().build();
    // two successive grants of one lock: the first one's holder is the stale one
    try (Lease first = locks.lock(table, LockOptions.fixed(Duration.ofSeconds(30))).acquire()) {
      older = first.fencingToken();
    }
    try (Lease second = locks.lock(table).acquire()) {
      newer = second.fencingToken();
    }
    assertThat(newer).isGreaterThan(older);
  }

  @AfterEach
  void tearDown() throws Exception {
    locks.close();
    exec("DROP TABLE " + table);
  }

  @Test
  void aStaleHolderIsRefusedAtItsReadAfterTheNextHolderWasAdmitted() throws Exception {
    try (Connection b = tx()) {
      fenced.admit(b, 42L, newer).orElseThrow().update("stock = ?", stock(b) - 1);
      b.commit();
    }
    try (Connection a = tx()) {
      assertThatThrownBy(() -> fenced.admit(a, 42L, older)).isInstanceOf(StaleTokenException.class)
          .satisfies(e -> {
            StaleTokenException stale = (StaleTokenException) e;
            assertThat(stale.token()).isEqualTo(older);
            assertThat(stale.highestSeen()).isEqualTo(newer);
          });
      a.rollback();
    }
    assertThat(stockNow()).isEqualTo(9);
  }

  @Test
  void theNextHolderWaitsForTheAdmittedOneSoNoUpdateIsLost() throws Exception {
    AtomicBoolean aCommitted = new AtomicBoolean();
    try (Connection a = tx()) {
      JdbcFencedTable.Admission mine = fenced.admit(a, 42L, older).orElseThrow();
      int read = stock(a);
      CompletableFuture<Boolean> b = CompletableFuture.supplyAsync(() -> {
        try (Connection c = tx()) {
          JdbcFencedTable.Admission next = fenced.admit(c, 42L, newer).orElseThrow(); // blocks on A's row lock
          boolean sawCommit = aCommitted.get();
          next.update("stock = ?", stock(c) - 1);
          c.commit();
          return sawCommit;
        } catch (SQLException e) {
          throw new IllegalStateException(e);
        }
      });
      assertThat(b).as("B is held at its read while A's transaction is open").isNotDone();
      mine.update("stock = ?", read - 1);
      aCommitted.set(true);
      a.commit();
      assertThat(b.get(10, TimeUnit.SECONDS)).as("B was admitted only after A committed").isTrue();
    }
    assertThat(stockNow()).as("both sales counted").isEqualTo(8);
    try (Connection a = tx()) {
      assertThatThrownBy(() -> fenced.admit(a, 42L, older)).isInstanceOf(StaleTokenException.class);
      a.rollback();
    }
  }

  @Test
  void aFencedWriteTellsStaleFromMissingAndAcceptsTheSameHolderAgain() throws Exception {
    try (Connection c = dataSource().getConnection()) {
      assertThat(fenced.update(c, 42L, newer, "stock = ?", 5)).isTrue();
      assertThat(fenced.update(c, 42L, newer, "stock = ?", 4)).as("equal token: the same holder").isTrue();
      assertThatThrownBy(() -> fenced.update(c, 42L, older, "stock = ?", 99)).isInstanceOf(StaleTokenException.class);
      assertThat(fenced.update(c, 7L, newer, "stock = ?", 1)).as("no such row, not stale").isFalse();
    }
    assertThat(stockNow()).isEqualTo(4);
    try (Connection c = tx()) {
      assertThat(fenced.admit(c, 7L, newer)).as("no such row").isEmpty();
      c.rollback();
    }
    try (Connection c = dataSource().getConnection()) {
      assertThatThrownBy(() -> fenced.admit(c, 42L, newer)).isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("transaction");
    }
    assertThatThrownBy(() -> JdbcFencedTable.of("inventory; DROP TABLE x", "id", "fence"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  private Connection tx() throws SQLException {
    Connection c = dataSource().getConnection();
    c.setAutoCommit(false);
    return c;
  }

  private int stock(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT stock FROM " + table + " WHERE id = 42");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getInt(1);
    }
  }

  private int stockNow() throws SQLException {
    try (Connection c = dataSource().getConnection()) {
      return stock(c);
    }
  }

  private void exec(String sql) throws SQLException {
    try (Connection c = dataSource().getConnection(); Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }
}
