package io.locksmith;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 12 item 14: the SQL recipes of {@code docs/fencing.md} (and the README) against a real SQL
 * engine (H2, test scope only), in the interleaving a write-only fence gets wrong. Holder A has token 1,
 * holder B, granted after A's lease ran out, token 2; each sells one item from a stock of 10.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FencingSqlRecipeTest {
  private static final long ID = 42;
  private String url;
  private Connection admin;

  @BeforeEach
  void createTable() throws SQLException {
    url = "jdbc:h2:mem:fencing-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=20000";
    admin = DriverManager.getConnection(url);
    try (Statement s = admin.createStatement()) {
      s.execute("CREATE TABLE inventory (id BIGINT PRIMARY KEY, stock INT NOT NULL, "
          + "fence BIGINT NOT NULL DEFAULT 0)");
      s.execute("INSERT INTO inventory (id, stock) VALUES (" + ID + ", 10)");
    }
  }

  @AfterEach
  void dropDatabase() throws SQLException {
    try (Statement s = admin.createStatement()) {
      s.execute("SHUTDOWN");
    }
    admin.close();
  }

  private int stock() throws SQLException {
    try (Statement s = admin.createStatement(); ResultSet rs = s.executeQuery(
        "SELECT stock FROM inventory WHERE id = " + ID)) {
      rs.next();
      return rs.getInt(1);
    }
  }

  private long fence() throws SQLException {
    try (Statement s = admin.createStatement(); ResultSet rs = s.executeQuery(
        "SELECT fence FROM inventory WHERE id = " + ID)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static int update(Connection db, String sql, long... args) throws SQLException {
    try (PreparedStatement ps = db.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setLong(i + 1, args[i]);
      }
      return ps.executeUpdate();
    }
  }

  private static int plainRead(Connection db) throws SQLException {
    try (PreparedStatement ps = db.prepareStatement("SELECT stock FROM inventory WHERE id = ?")) {
      ps.setLong(1, ID);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  // ------------------------------------------------------------------ the old, write-only recipe

  @Test
  void theOldWriteOnlyRecipeAcceptsTheStaleWriteAndLosesAnUpdate() throws SQLException {
    String oldWrite = "UPDATE inventory SET stock = ?, fence = ? WHERE id = ? AND fence <= ?";
    try (Connection a = DriverManager.getConnection(url); Connection b = DriverManager.getConnection(url)) {
      int readByA = plainRead(a);
      int readByB = plainRead(b);
      int acceptedA = update(a, oldWrite, readByA - 1, 1, ID, 1);
      int acceptedB = update(b, oldWrite, readByB - 1, 2, ID, 2);
      assertThat(acceptedA + acceptedB).as("rows updated: the stale write was accepted").isEqualTo(2);
    }
    assertThat(stock()).as("two sales, one item taken: an update was lost").isEqualTo(9);
  }

  // ------------------------------------------------------------------ admitting statement first

  private static final String ADMIT = "UPDATE inventory SET fence = ? WHERE id = ? AND fence <= ?";
  private static final String WRITE = "UPDATE inventory SET stock = ? WHERE id = ? AND fence <= ?";

  @Test
  void admittedByAStatementOfItsOwnAtTheReadTheStaleWriteIsRefused() throws SQLException {
    try (Connection a = DriverManager.getConnection(url); Connection b = DriverManager.getConnection(url)) {
      assertThat(update(a, ADMIT, 1, ID, 1)).as("A admitted").isEqualTo(1);
      int readByA = plainRead(a);
      assertThat(update(b, ADMIT, 2, ID, 2)).as("B admitted").isEqualTo(1);
      int readByB = plainRead(b);
      assertThat(update(a, WRITE, readByA - 1, ID, 1)).as("A's stale write: rows updated").isZero();
      assertThat(update(b, WRITE, readByB - 1, ID, 2)).isEqualTo(1);
      assertThat(update(a, ADMIT, 1, ID, 1)).as("A cannot be admitted again").isZero();
    }
    assertThat(stock()).as("one sale, one item taken").isEqualTo(9);
    assertThat(fence()).isEqualTo(2);
  }

  // ------------------------------------------------------------------ one transaction, FOR UPDATE

  /** The transactional recipe of docs/fencing.md; {@code afterRead} stands for the work (and a pause). */
  private static void sellInOneTransaction(Connection db, long token, Runnable afterRead) throws SQLException {
    db.setAutoCommit(false);
    try {
      int stock;
      try (PreparedStatement read = db.prepareStatement(
          "SELECT stock, fence FROM inventory WHERE id = ? FOR UPDATE")) {
        read.setLong(1, ID);
        try (ResultSet rs = read.executeQuery()) {
          if (!rs.next()) {
            throw new IllegalStateException("no inventory row " + ID);
          }
          if (rs.getLong("fence") > token) {
            throw new StaleTokenException("inventory-" + ID, token, rs.getLong("fence"));
          }
          stock = rs.getInt("stock");
        }
      }
      afterRead.run();
      try (PreparedStatement write = db.prepareStatement(
          "UPDATE inventory SET stock = ?, fence = ? WHERE id = ?")) {
        write.setInt(1, stock - 1);
        write.setLong(2, token);
        write.setLong(3, ID);
        write.executeUpdate();
      }
      db.commit();
    } catch (RuntimeException | SQLException e) {
      db.rollback();
      throw e;
    }
  }

  private boolean someSessionIsBlocked() throws SQLException {
    try (Statement s = admin.createStatement(); ResultSet rs = s.executeQuery(
        "SELECT COUNT(*) FROM INFORMATION_SCHEMA.SESSIONS WHERE BLOCKER_ID IS NOT NULL")) {
      rs.next();
      return rs.getInt(1) > 0;
    }
  }

  @Test
  void inOneTransactionTheNextHoldersReadWaitsForThePausedHolderAndSeesItsWrite() throws Exception {
    CountDownLatch aRead = new CountDownLatch(1);
    CountDownLatch aWakes = new CountDownLatch(1);
    try (Connection a = DriverManager.getConnection(url); Connection b = DriverManager.getConnection(url)) {
      CompletableFuture<Void> holderA = CompletableFuture.runAsync(() -> {
        try {
          sellInOneTransaction(a, 1, () -> {
            aRead.countDown();
            try {
              aWakes.await(); // A is paused between its read and its write
            } catch (InterruptedException e) {
              throw new IllegalStateException(e);
            }
          });
        } catch (SQLException e) {
          throw new IllegalStateException(e);
        }
      });
      assertThat(aRead.await(20, TimeUnit.SECONDS)).isTrue();
      CompletableFuture<Void> holderB = CompletableFuture.runAsync(() -> {
        try {
          sellInOneTransaction(b, 2, () -> {});
        } catch (SQLException e) {
          throw new IllegalStateException(e);
        }
      });
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
      while (!someSessionIsBlocked()) { // B's read is waiting for A's row lock
        assertThat(System.nanoTime() - deadline).as("B never blocked on A's row lock").isNegative();
        assertThat(holderB).as("B must not read while A's transaction holds the row").isNotDone();
        java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2)); // nothing to wait on: H2 blocks B inside
      }
      assertThat(holderB).isNotDone();
      aWakes.countDown();
      holderA.get(20, TimeUnit.SECONDS);
      holderB.get(20, TimeUnit.SECONDS);
    }
    assertThat(stock()).as("two sales, two items taken: B read A's write").isEqualTo(8);
    assertThat(fence()).isEqualTo(2);
  }

  @Test
  void inOneTransactionAHolderSupersededBeforeItsReadIsRefusedAtTheRead() throws SQLException {
    try (Connection a = DriverManager.getConnection(url); Connection b = DriverManager.getConnection(url)) {
      sellInOneTransaction(b, 2, () -> {});
      boolean[] worked = {false};
      assertThatThrownBy(() -> sellInOneTransaction(a, 1, () -> worked[0] = true))
          .isInstanceOfSatisfying(StaleTokenException.class, e -> assertThat(e.highestSeen()).isEqualTo(2));
      assertThat(worked[0]).as("the stale holder stopped at its read").isFalse();
    }
    assertThat(stock()).isEqualTo(9);
  }
}
