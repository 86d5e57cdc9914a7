package io.locksmith.jdbc;

import io.locksmith.StaleTokenException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The resource side of fencing for rows of the application's own tables: a {@code fence BIGINT NOT NULL
 * DEFAULT 0} column next to the data holds the largest fencing token admitted for the row, and every
 * access under a lock goes through this class. Works the same on PostgreSQL, MariaDB/MySQL and H2 (and
 * any database with {@code SELECT … FOR UPDATE}).
 *
 * <p><b>Admit the token at the first access</b>, the read, not only at the write (see {@code
 * docs/fencing.md}): a write-only fence accepts a paused holder's late write that lands between the next
 * holder's read and write, and loses an update. {@link #admit(Connection, Object, long)} reads the row
 * with {@code SELECT … FOR UPDATE} in the caller's transaction, refuses the token if the fence is larger
 * ({@link StaleTokenException}), raises the fence to it otherwise; the row lock lasts until the commit,
 * so nobody reads or writes the row between this holder's check and its write. Write through the
 * returned {@link Admission}, which checks the token again ({@code … AND fence <= ?}):
 *
 * <pre>{@code
 * JdbcFencedTable inventory = JdbcFencedTable.of("inventory", "id", "fence");
 * try (Lease lease = locks.lock("inventory-42").acquire(Duration.ofSeconds(5));
 *     Connection c = dataSource.getConnection()) {
 *   c.setAutoCommit(false);
 *   JdbcFencedTable.Admission row = inventory.admit(c, 42, lease.fencingToken())
 *       .orElseThrow(() -> new IllegalStateException("no inventory row 42"));
 *   int stock = readStock(c, 42);                       // the row is locked and admitted
 *   row.update("stock = ?", stock - 1);
 *   c.commit();
 * } catch (StaleTokenException e) {
 *   // superseded by a later holder: roll back, do not retry with this token
 * }
 * }</pre>
 *
 * <p>Where the first access is itself the write and needs no earlier read, {@link
 * #update(Connection, Object, long, String, Object...)} admits and writes in one statement, also in
 * autocommit. Both report <em>rejected as stale</em> ({@link StaleTokenException}) distinctly from
 * <em>no such row</em> (an empty result or {@code false}); neither treats zero updated rows as success.
 *
 * <p>Table and column names are checked identifiers; the {@code SET} clause is application code with
 * {@code ?} placeholders, never user input. Immutable and thread-safe; the connections are the
 * caller's, and nothing here commits or rolls back.
 */
public final class JdbcFencedTable {
  private static final Pattern IDENTIFIER =
      Pattern.compile("([A-Za-z_][A-Za-z0-9_]{0,62}\\.)?[A-Za-z_][A-Za-z0-9_]{0,62}");

  private final String table;
  private final String keyColumn;
  private final String fenceColumn;
  private final String admitRead;
  private final String admitRaise;
  private final String fenceRead;
  /** Seconds each statement may run ({@link PreparedStatement#setQueryTimeout}); 0: the driver's default. */
  private final int queryTimeoutSeconds;

  private JdbcFencedTable(String table, String keyColumn, String fenceColumn, int queryTimeoutSeconds) {
    this.queryTimeoutSeconds = queryTimeoutSeconds;
    this.table = table;
    this.keyColumn = keyColumn;
    this.fenceColumn = fenceColumn;
    this.admitRead = "SELECT " + fenceColumn + " FROM " + table + " WHERE " + keyColumn + " = ? FOR UPDATE";
    this.admitRaise = "UPDATE " + table + " SET " + fenceColumn + " = ? WHERE " + keyColumn + " = ? AND "
        + fenceColumn + " < ?";
    this.fenceRead = "SELECT " + fenceColumn + " FROM " + table + " WHERE " + keyColumn + " = ?";
  }

  /**
   * @param table the protected table, {@code [schema.]name}
   * @param keyColumn its primary key column (one column)
   * @param fenceColumn its fence column, {@code BIGINT NOT NULL DEFAULT 0}
   * @return the helper
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if a name is not a plain identifier
   */
  public static JdbcFencedTable of(String table, String keyColumn, String fenceColumn) {
    return new JdbcFencedTable(identifier("table", table), identifier("keyColumn", keyColumn),
        identifier("fenceColumn", fenceColumn), 0);
  }

  /**
   * @param timeout how long each of this helper's statements may run before the driver cancels it,
   *     1 s to 10 min (JDBC counts whole seconds)
   * @return a helper like this one whose statements carry that timeout
   * @throws NullPointerException if {@code timeout} is null
   * @throws IllegalArgumentException if {@code timeout} is out of range
   */
  public JdbcFencedTable withQueryTimeout(java.time.Duration timeout) {
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.compareTo(java.time.Duration.ofSeconds(1)) < 0
        || timeout.compareTo(java.time.Duration.ofMinutes(10)) > 0) {
      throw new IllegalArgumentException("timeout must be from 1 s to 10 min, was " + timeout);
    }
    return new JdbcFencedTable(table, keyColumn, fenceColumn, (int) timeout.toSeconds());
  }

  private PreparedStatement prepare(Connection connection, String sql) throws SQLException {
    PreparedStatement ps = connection.prepareStatement(sql);
    if (queryTimeoutSeconds > 0) {
      ps.setQueryTimeout(queryTimeoutSeconds);
    }
    return ps;
  }

  private static String identifier(String what, String name) {
    Objects.requireNonNull(name, what);
    if (!IDENTIFIER.matcher(name).matches()) {
      throw new IllegalArgumentException(what + " must be a plain SQL identifier, was '" + name + "'");
    }
    return name;
  }

  /**
   * The first access of a row under the lock: locks the row ({@code SELECT … FOR UPDATE}), refuses
   * {@code token} if the row's fence is larger, raises the fence to {@code token} otherwise. Runs in the
   * caller's open transaction; the row stays locked until it ends.
   *
   * @param connection a connection with a transaction open ({@code autoCommit} off)
   * @param key the row's key
   * @param token the lease's fencing token
   * @return the admission, or empty if there is no such row
   * @throws StaleTokenException if a larger token has been admitted for the row: roll back
   * @throws IllegalStateException if the connection is in autocommit (the row lock would end at once)
   * @throws SQLException if the database fails the statements
   * @throws NullPointerException if {@code connection} or {@code key} is null
   */
  public Optional<Admission> admit(Connection connection, Object key, long token) throws SQLException {
    Objects.requireNonNull(connection, "connection");
    Objects.requireNonNull(key, "key");
    if (connection.getAutoCommit()) {
      throw new IllegalStateException("admit needs an open transaction (autoCommit off): the row lock that keeps"
          + " other holders out must last until the write is committed");
    }
    long fence;
    try (PreparedStatement ps = prepare(connection, admitRead)) {
      ps.setObject(1, key);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return Optional.empty();
        }
        fence = rs.getLong(1);
      }
    }
    if (fence > token) {
      throw new StaleTokenException(resource(key), token, fence);
    }
    if (fence < token) {
      try (PreparedStatement ps = prepare(connection, admitRaise)) {
        ps.setLong(1, token);
        ps.setObject(2, key);
        ps.setLong(3, token);
        ps.executeUpdate();
      }
    }
    return Optional.of(new Admission(connection, key, token));
  }

  /**
   * Admits {@code token} and writes in one statement, {@code UPDATE … SET <set>, fence = ? WHERE key = ?
   * AND fence <= ?}, for a first access that is a write not depending on an earlier read. Works in
   * autocommit or inside the caller's transaction.
   *
   * @param connection the connection
   * @param key the row's key
   * @param token the lease's fencing token
   * @param set the assignments, e.g. {@code "status = ?, updated_at = ?"}
   * @param values the values of the placeholders in {@code set}, in order
   * @return {@code true} if written, {@code false} if there is no such row
   * @throws StaleTokenException if a larger token has been admitted for the row; nothing was written
   * @throws SQLException if the database fails the statement
   * @throws NullPointerException if an argument is null
   */
  public boolean update(Connection connection, Object key, long token, String set, Object... values)
      throws SQLException {
    Objects.requireNonNull(connection, "connection");
    Objects.requireNonNull(key, "key");
    if (fencedUpdate(connection, key, token, set, values) > 0) {
      return true;
    }
    try (PreparedStatement ps = prepare(connection, fenceRead)) {
      ps.setObject(1, key);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return false;
        }
        throw new StaleTokenException(resource(key), token, rs.getLong(1));
      }
    }
  }

  private int fencedUpdate(Connection connection, Object key, long token, String set, Object... values)
      throws SQLException {
    Objects.requireNonNull(set, "set");
    Objects.requireNonNull(values, "values");
    String sql = "UPDATE " + table + " SET " + set + ", " + fenceColumn + " = ? WHERE " + keyColumn + " = ? AND "
        + fenceColumn + " <= ?";
    try (PreparedStatement ps = prepare(connection, sql)) {
      int i = 1;
      for (Object v : values) {
        ps.setObject(i++, v);
      }
      ps.setLong(i++, token);
      ps.setObject(i++, key);
      ps.setLong(i, token);
      return ps.executeUpdate();
    }
  }

  private String resource(Object key) {
    return table + "[" + key + "]";
  }

  @Override
  public String toString() {
    return "JdbcFencedTable[" + table + "." + keyColumn + ", fence " + fenceColumn + "]";
  }

  /**
   * One holder's admission to one row, from {@link JdbcFencedTable#admit}. Its writes check the token
   * again. Not thread-safe (it uses the caller's connection).
   */
  public final class Admission {
    private final Connection connection;
    private final Object key;
    private final long token;

    private Admission(Connection connection, Object key, long token) {
      this.connection = connection;
      this.key = key;
      this.token = token;
    }

    /** @return the admitted token */
    public long token() {
      return token;
    }

    /** @return the row's key */
    public Object key() {
      return key;
    }

    /**
     * Writes the row if this admission still stands: {@code UPDATE … SET <set>, fence = ? WHERE key = ?
     * AND fence <= ?}, on the admission's connection.
     *
     * @param set the assignments, e.g. {@code "stock = ?"}
     * @param values the values of the placeholders in {@code set}, in order
     * @throws StaleTokenException if a larger token was admitted meanwhile; nothing was written
     * @throws IllegalStateException if the row is gone (deleted in this transaction)
     * @throws SQLException if the database fails the statement
     * @throws NullPointerException if an argument is null
     */
    public void update(String set, Object... values) throws SQLException {
      if (!JdbcFencedTable.this.update(connection, key, token, set, values)) {
        throw new IllegalStateException("the admitted row " + resource(key) + " no longer exists");
      }
    }
  }
}
