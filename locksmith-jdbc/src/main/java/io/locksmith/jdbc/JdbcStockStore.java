package io.locksmith.jdbc;

import io.locksmith.NoFencingTokenException;
import io.locksmith.StaleTokenException;
import io.locksmith.recipes.StockStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * A {@link StockStore} in a database table, one row per segment, fenced by the database itself: every
 * read admits the caller's token through {@link JdbcFencedTable} ({@code SELECT … FOR UPDATE}, then the
 * fence raised) and every write is {@code UPDATE … WHERE fence <= token}, so a paused holder's late write
 * is refused by the statement that would have applied it. A write of several segments is one
 * transaction: all or none. Works on PostgreSQL, MariaDB/MySQL and H2.
 *
 * <pre>{@code
 * CREATE TABLE locksmith_stock (
 *   segment_key VARCHAR(300) PRIMARY KEY,  -- item '#' segment
 *   item        VARCHAR(255) NOT NULL,
 *   segment     INT          NOT NULL,
 *   units       BIGINT       NOT NULL,
 *   fence       BIGINT       NOT NULL DEFAULT 0
 * );
 * CREATE INDEX locksmith_stock_item ON locksmith_stock (item, segment);
 * }</pre>
 *
 * <p>{@link #createTableIfMissing()} runs that DDL (for tests and demos; production schemas belong to
 * the application's migrations). Item names are at most 255 characters.
 *
 * <p><b>Failures.</b> Every statement runs with the statement timeout ({@link Builder#statementTimeout},
 * default 5 s); a database failure or timeout is thrown as an {@link IllegalStateException} carrying the
 * {@link SQLException}, after the transaction is rolled back.
 * A write whose commit timed out may have been applied, as the {@link StockStore} contract says.
 *
 * <p>Immutable and thread-safe; each call borrows one connection from the data source.
 */
public final class JdbcStockStore implements StockStore {
  private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");
  /** Separates the item from the segment in the row key; items may contain it, the segment cannot. */
  private static final char KEY_SEPARATOR = '#';
  private static final int MAX_ITEM = 255;

  private final DataSource dataSource;
  private final String table;
  private final int timeoutSeconds;
  private final JdbcFencedTable fenced;
  private final String count;
  private final String insert;
  private final String unitsOfSegment;
  private final String unitsOfItem;

  private JdbcStockStore(Builder b) {
    this.dataSource = b.dataSource;
    this.table = b.table;
    this.timeoutSeconds = (int) Math.max(1, b.statementTimeout.toSeconds());
    this.fenced = JdbcFencedTable.of(table, "segment_key", "fence").withQueryTimeout(b.statementTimeout);
    this.count = "SELECT count(*) FROM " + table + " WHERE item = ?";
    this.insert = "INSERT INTO " + table + " (segment_key, item, segment, units, fence) VALUES (?, ?, ?, 0, 0)";
    this.unitsOfSegment = "SELECT units FROM " + table + " WHERE segment_key = ?";
    this.unitsOfItem = "SELECT units FROM " + table + " WHERE item = ? ORDER BY segment";
  }

  /**
   * @param dataSource where the table lives, ideally a pool
   * @return a builder; the table is {@code locksmith_stock} unless set
   * @throws NullPointerException if {@code dataSource} is null
   */
  public static Builder builder(DataSource dataSource) {
    return new Builder(Objects.requireNonNull(dataSource, "dataSource"));
  }

  /**
   * Creates the table and its index unless they exist ({@code CREATE … IF NOT EXISTS}).
   *
   * @return this store
   * @throws IllegalStateException if the database refuses the DDL
   */
  public JdbcStockStore createTableIfMissing() {
    try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
      s.setQueryTimeout(timeoutSeconds);
      s.execute("CREATE TABLE IF NOT EXISTS " + table + " (segment_key VARCHAR(300) PRIMARY KEY,"
          + " item VARCHAR(" + MAX_ITEM + ") NOT NULL, segment INT NOT NULL, units BIGINT NOT NULL,"
          + " fence BIGINT NOT NULL DEFAULT 0)");
      s.execute("CREATE INDEX IF NOT EXISTS " + table + "_item ON " + table + " (item, segment)");
      if (!c.getAutoCommit()) {
        c.commit();
      }
    } catch (SQLException e) {
      throw failure("create the stock table " + table, e);
    }
    return this;
  }

  @Override
  public int create(String item, int segments) {
    checkItem(item);
    if (segments < 1) {
      throw new IllegalArgumentException("segments must be at least 1, was " + segments);
    }
    try (Connection c = dataSource.getConnection()) {
      int existing = count(c, item);
      if (existing > 0) {
        return existing;
      }
      boolean autoCommit = c.getAutoCommit();
      c.setAutoCommit(false);
      try (PreparedStatement ps = c.prepareStatement(insert)) {
        ps.setQueryTimeout(timeoutSeconds);
        for (int s = 0; s < segments; s++) {
          ps.setString(1, key(item, s));
          ps.setString(2, item);
          ps.setInt(3, s);
          ps.addBatch();
        }
        ps.executeBatch();
        c.commit();
        return segments;
      } catch (SQLException e) {
        c.rollback();
        if (e.getSQLState() != null && e.getSQLState().startsWith("23")) {
          return count(c, item); // another caller created the item first: its count stands
        }
        throw e;
      } finally {
        c.setAutoCommit(autoCommit);
      }
    } catch (SQLException e) {
      throw failure("create item '" + item + "'", e);
    }
  }

  @Override
  public long read(String item, int segment, long token) {
    checkItem(item);
    checkToken(item, segment, token);
    return inTransaction("read segment " + segment + " of '" + item + "'", c -> {
      String key = key(item, segment);
      if (fenced.admit(c, key, token).isEmpty()) {
        throw new IllegalArgumentException("item '" + item + "' has no segment " + segment);
      }
      try (PreparedStatement ps = c.prepareStatement(unitsOfSegment)) {
        ps.setQueryTimeout(timeoutSeconds);
        ps.setString(1, key);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          return rs.getLong(1);
        }
      }
    });
  }

  @Override
  public void write(String item, List<SegmentWrite> writes) {
    checkItem(item);
    Objects.requireNonNull(writes, "writes");
    Set<Integer> seen = new HashSet<>();
    for (SegmentWrite w : writes) {
      Objects.requireNonNull(w, "a write");
      if (!seen.add(w.segment())) {
        throw new IllegalArgumentException("segment " + w.segment() + " is written twice");
      }
      if (w.units() < 0) {
        throw new IllegalArgumentException("units must not be negative, was " + w.units());
      }
      checkToken(item, w.segment(), w.token());
    }
    inTransaction("write " + writes.size() + " segment(s) of '" + item + "'", c -> {
      for (SegmentWrite w : writes) {
        if (!fenced.update(c, key(item, w.segment()), w.token(), "units = ?", w.units())) {
          throw new IllegalArgumentException("item '" + item + "' has no segment " + w.segment());
        }
      }
      return null;
    });
  }

  @Override
  public long[] units(String item) {
    checkItem(item);
    try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(unitsOfItem)) {
      ps.setQueryTimeout(timeoutSeconds);
      ps.setString(1, item);
      List<Long> units = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          units.add(rs.getLong(1));
        }
      }
      return units.stream().mapToLong(Long::longValue).toArray();
    } catch (SQLException e) {
      throw failure("read the units of '" + item + "'", e);
    }
  }

  @Override
  public String toString() {
    return "JdbcStockStore[" + table + "]";
  }

  private int count(Connection c, String item) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(count)) {
      ps.setQueryTimeout(timeoutSeconds);
      ps.setString(1, item);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  /** A transaction step that may fail with SQL. */
  @FunctionalInterface
  private interface Step<T> {
    T run(Connection c) throws SQLException;
  }

  /** Runs {@code step} in one transaction: committed if it returns, rolled back if it throws. */
  private <T> T inTransaction(String what, Step<T> step) {
    try (Connection c = dataSource.getConnection()) {
      boolean autoCommit = c.getAutoCommit();
      c.setAutoCommit(false);
      try {
        T result = step.run(c);
        c.commit();
        return result;
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      } finally {
        c.setAutoCommit(autoCommit);
      }
    } catch (SQLException e) {
      throw failure(what, e);
    }
  }

  private static String key(String item, int segment) {
    return item + KEY_SEPARATOR + segment;
  }

  private static void checkItem(String item) {
    Objects.requireNonNull(item, "item");
    if (item.isEmpty() || item.length() > MAX_ITEM) {
      throw new IllegalArgumentException("an item name has 1 to " + MAX_ITEM + " characters, was " + item.length());
    }
  }

  private static void checkToken(String item, int segment, long token) {
    if (token < 1) {
      throw new NoFencingTokenException(item + KEY_SEPARATOR + segment, token, 0);
    }
  }

  private IllegalStateException failure(String what, SQLException e) {
    return new IllegalStateException("could not " + what + " in table " + table + ": " + e.getMessage(), e);
  }

  /** Builds a {@link JdbcStockStore}; not thread-safe. Everything is checked by {@link #build()}. */
  public static final class Builder {
    private final DataSource dataSource;
    private String table = "locksmith_stock";
    private Duration statementTimeout = Duration.ofSeconds(5);

    private Builder(DataSource dataSource) {
      this.dataSource = dataSource;
    }

    /**
     * @param table the table, a plain identifier; default {@code locksmith_stock}
     * @return this builder
     */
    public Builder table(String table) {
      this.table = table;
      return this;
    }

    /**
     * @param timeout bound on every statement, 1 s to 10 min; default 5 s (JDBC counts whole seconds)
     * @return this builder
     */
    public Builder statementTimeout(Duration timeout) {
      this.statementTimeout = timeout;
      return this;
    }

    /**
     * @return the store
     * @throws NullPointerException if the table or the timeout is null
     * @throws IllegalArgumentException if the table is not a plain identifier or the timeout is out of range
     */
    public JdbcStockStore build() {
      Objects.requireNonNull(table, "table");
      Objects.requireNonNull(statementTimeout, "statementTimeout");
      if (!IDENTIFIER.matcher(table).matches()) {
        throw new IllegalArgumentException("table must be a plain SQL identifier, was '" + table + "'");
      }
      if (statementTimeout.compareTo(Duration.ofSeconds(1)) < 0
          || statementTimeout.compareTo(Duration.ofMinutes(10)) > 0) {
        throw new IllegalArgumentException("statementTimeout must be from 1 s to 10 min, was " + statementTimeout);
      }
      return new JdbcStockStore(this);
    }
  }
}
