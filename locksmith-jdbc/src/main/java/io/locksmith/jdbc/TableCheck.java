package io.locksmith.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * What {@link JdbcLockClient.Builder#build()} checks beyond the columns, because a table or sequence of
 * the right shape can still break the locks: the primary keys (one row per name, the grant's upsert
 * relies on them), how the name columns compare (MariaDB's PAD SPACE collations make {@code 'job'} and
 * {@code 'job '} one lock, a case-insensitive one makes {@code 'Job'} and {@code 'job'} one), and the
 * token sequence (a PostgreSQL {@code CACHE} above 1 hands each session its own block of values, so one
 * name's tokens go backwards between clients; a cycling or decreasing sequence goes backwards too). Each
 * problem is reported with the statement that fixes it. Stateless.
 */
final class TableCheck {
  private static final Pattern WORD = Pattern.compile("[A-Za-z0-9_]+");

  private TableCheck() {}

  /** @return the problems found, each with its fix, or an empty list */
  static List<String> problems(Connection c, Sql sql) throws SQLException {
    List<String> problems = new ArrayList<>();
    primaryKey(c, sql, sql.table, List.of("namespace", "kind", "lock_name"), problems);
    primaryKey(c, sql, sql.permitsTable, List.of("namespace", "lock_name", "owner"), problems);
    String readWrite = new ReadWriteSql(sql).table;
    primaryKey(c, sql, readWrite, List.of("namespace", "lock_name", "member_id", "member_kind"), problems);
    primaryKey(c, sql, sql.waitersTable, List.of("namespace", "kind", "lock_name", "waiter_id"), problems);
    collation(c, sql, sql.table, problems);
    collation(c, sql, sql.permitsTable, problems);
    collation(c, sql, sql.waitersTable, problems); // a fair lock's queue is found by its name
    collation(c, sql, readWrite, problems);
    String sequence = sequence(c, sql);
    if (sequence != null) {
      problems.add(sequence);
    }
    return problems;
  }

  private static String schemaOf(String qualified) {
    int dot = qualified.indexOf('.');
    return dot < 0 ? null : qualified.substring(0, dot);
  }

  private static String nameOf(String qualified) {
    return qualified.substring(qualified.indexOf('.') + 1);
  }

  private static void primaryKey(Connection c, Sql sql, String table, List<String> expected, List<String> problems)
      throws SQLException {
    String query = switch (sql.dialect) {
      case POSTGRESQL -> "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid"
          + " AND a.attnum = ANY(i.indkey) WHERE i.indrelid = to_regclass(?) AND i.indisprimary";
      case MARIADB -> "SELECT COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA ="
          + " COALESCE(?, DATABASE()) AND TABLE_NAME = ? AND CONSTRAINT_NAME = 'PRIMARY'";
      case H2 -> "SELECT k.COLUMN_NAME FROM INFORMATION_SCHEMA.TABLE_CONSTRAINTS t"
          + " JOIN INFORMATION_SCHEMA.KEY_COLUMN_USAGE k ON k.CONSTRAINT_SCHEMA = t.CONSTRAINT_SCHEMA"
          + " AND k.CONSTRAINT_NAME = t.CONSTRAINT_NAME WHERE t.CONSTRAINT_TYPE = 'PRIMARY KEY'"
          + " AND t.TABLE_SCHEMA = COALESCE(CAST(? AS VARCHAR), CURRENT_SCHEMA) AND t.TABLE_NAME = ?";
    };
    Set<String> found = new LinkedHashSet<>();
    try (PreparedStatement ps = c.prepareStatement(query)) {
      bindTable(ps, sql.dialect, table);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          found.add(rs.getString(1).toLowerCase(Locale.ROOT));
        }
      }
    }
    if (!found.equals(new LinkedHashSet<>(expected))) {
      problems.add("the primary key of " + table + " is " + (found.isEmpty() ? "missing" : found)
          + " where the locks need (" + String.join(", ", expected) + "): without it a name can get two rows"
          + " and two holders. Fix: ALTER TABLE " + table + " ADD PRIMARY KEY (" + String.join(", ", expected)
          + ") (after removing duplicates), or recreate the table from JdbcLockClient.ddl");
    }
  }

  private static void bindTable(PreparedStatement ps, JdbcDialect dialect, String table) throws SQLException {
    if (dialect == JdbcDialect.POSTGRESQL) {
      ps.setString(1, table); // resolved like the statements resolve it: by the search_path
      return;
    }
    String schema = schemaOf(table);
    String name = nameOf(table);
    if (dialect == JdbcDialect.H2) { // unquoted identifiers are stored in upper case
      schema = schema == null ? null : schema.toUpperCase(Locale.ROOT);
      name = name.toUpperCase(Locale.ROOT);
    }
    ps.setString(1, schema);
    ps.setString(2, name);
  }

  /** The name columns must tell {@code 'job'} from {@code 'job '} and {@code 'Job'} from {@code 'job'}. */
  private static void collation(Connection c, Sql sql, String table, List<String> problems) throws SQLException {
    String query = switch (sql.dialect) {
      case POSTGRESQL -> "SELECT a.attname, co.collname, co.collisdeterministic FROM pg_attribute a"
          + " JOIN pg_collation co ON co.oid = a.attcollation WHERE a.attrelid = to_regclass(?)"
          + " AND a.attname IN ('namespace', 'lock_name')";
      case MARIADB -> "SELECT COLUMN_NAME, CHARACTER_SET_NAME, COLLATION_NAME FROM information_schema.COLUMNS"
          + " WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ?"
          + " AND COLUMN_NAME IN ('namespace', 'lock_name')";
      case H2 -> "SELECT COLUMN_NAME, DATA_TYPE FROM INFORMATION_SCHEMA.COLUMNS"
          + " WHERE TABLE_SCHEMA = COALESCE(CAST(? AS VARCHAR), CURRENT_SCHEMA) AND TABLE_NAME = ?"
          + " AND COLUMN_NAME IN ('NAMESPACE', 'LOCK_NAME')";
    };
    List<String[]> columns = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(query)) {
      bindTable(ps, sql.dialect, table);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          columns.add(new String[] {rs.getString(1), rs.getString(2),
              sql.dialect == JdbcDialect.H2 ? null : rs.getString(3)});
        }
      }
    }
    List<String> loose = new ArrayList<>();
    List<String> fixes = new ArrayList<>();
    for (String[] column : columns) {
      boolean exact = switch (sql.dialect) {
        case POSTGRESQL -> "t".equals(column[2]) || "true".equalsIgnoreCase(column[2]);
        case H2 -> !column[1].toUpperCase(Locale.ROOT).contains("IGNORECASE");
        case MARIADB -> comparesExactly(c, column[1], column[2]);
      };
      if (!exact) {
        String name = column[0].toLowerCase(Locale.ROOT);
        loose.add(name + " (" + (sql.dialect == JdbcDialect.H2 ? column[1] : column[2]) + ")");
        fixes.add(fix(sql.dialect, table, name));
      }
    }
    if (!loose.isEmpty()) {
      problems.add("in " + table + ", " + String.join(" and ", loose) + " compare names loosely (ignoring trailing"
          + " spaces or letter case), while 'job', 'job ' and 'Job' must be three locks. Fix: ALTER TABLE " + table
          + " " + String.join(", ", fixes));
    }
  }

  /** Asks MariaDB itself: trailing spaces (PAD SPACE) and letter case must both make a difference. */
  private static boolean comparesExactly(Connection c, String charset, String collation) throws SQLException {
    if (charset == null || collation == null) {
      return false; // not a character column
    }
    if (!WORD.matcher(charset).matches() || !WORD.matcher(collation).matches()) {
      return false;
    }
    String q = "SELECT CONVERT('job' USING " + charset + ") = CONVERT('job ' USING " + charset + ") COLLATE "
        + collation + ", CONVERT('a' USING " + charset + ") = CONVERT('A' USING " + charset + ") COLLATE " + collation;
    try (PreparedStatement ps = c.prepareStatement(q); ResultSet rs = ps.executeQuery()) {
      return rs.next() && !rs.getBoolean(1) && !rs.getBoolean(2);
    }
  }

  private static String fix(JdbcDialect dialect, String table, String column) {
    return switch (dialect) {
      case MARIADB -> "MODIFY " + column + " VARCHAR(" + (column.equals("namespace") ? 64 : 512)
          + ") CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL";
      case POSTGRESQL -> "ALTER COLUMN " + column + " TYPE VARCHAR(" + (column.equals("namespace") ? 64 : 512)
          + ") COLLATE \"C\"";
      case H2 -> "ALTER COLUMN " + column + " SET DATA TYPE VARCHAR(" + (column.equals("namespace") ? 64 : 1024) + ")";
    };
  }

  /** @return what is wrong with the token sequence and how to fix it, or null */
  private static String sequence(Connection c, Sql sql) throws SQLException {
    String seq = sql.sequence;
    String fix;
    List<String> wrong = new ArrayList<>();
    switch (sql.dialect) {
      case POSTGRESQL -> {
        fix = "ALTER SEQUENCE " + seq + " CACHE 1 INCREMENT BY 1 NO CYCLE";
        try (PreparedStatement ps = c.prepareStatement("SELECT seqincrement, seqcache, seqcycle FROM pg_sequence"
            + " WHERE seqrelid = to_regclass(?)")) {
          ps.setString(1, seq);
          try (ResultSet rs = ps.executeQuery()) {
            if (!rs.next()) {
              return "the token sequence " + seq + " is missing";
            }
            if (rs.getLong(1) <= 0) {
              wrong.add("it does not increase (INCREMENT BY " + rs.getLong(1) + ")");
            }
            if (rs.getLong(2) > 1) {
              wrong.add("each session caches its own block of values (CACHE " + rs.getLong(2) + "), so tokens of"
                  + " one name go backwards between clients");
            }
            if (rs.getBoolean(3)) {
              wrong.add("it starts over at its end (CYCLE)");
            }
          }
        }
      }
      case MARIADB -> {
        // MariaDB's sequence cache is shared by all sessions: cached values still come out in order
        fix = "ALTER SEQUENCE " + seq + " INCREMENT BY 1 NO CYCLE";
        try (PreparedStatement ps = c.prepareStatement("SELECT increment, cycle_option FROM " + seq);
            ResultSet rs = ps.executeQuery()) {
          if (!rs.next()) {
            return "the token sequence " + seq + " is missing";
          }
          if (rs.getLong(1) < 0) { // 0: the server's auto_increment_increment, which is positive
            wrong.add("it does not increase (INCREMENT BY " + rs.getLong(1) + ")");
          }
          if (rs.getLong(2) != 0) {
            wrong.add("it starts over at its end (CYCLE)");
          }
        }
      }
      case H2 -> {
        fix = "ALTER SEQUENCE " + seq + " INCREMENT BY 1 NO CYCLE";
        try (PreparedStatement ps = c.prepareStatement("SELECT INCREMENT, CYCLE_OPTION FROM"
            + " INFORMATION_SCHEMA.SEQUENCES WHERE SEQUENCE_SCHEMA = COALESCE(CAST(? AS VARCHAR), CURRENT_SCHEMA)"
            + " AND SEQUENCE_NAME = ?")) {
          bindTable(ps, JdbcDialect.H2, seq);
          try (ResultSet rs = ps.executeQuery()) {
            if (!rs.next()) {
              return "the token sequence " + seq + " is missing (in the table's schema)";
            }
            if (rs.getLong(1) <= 0) {
              wrong.add("it does not increase (INCREMENT BY " + rs.getLong(1) + ")");
            }
            if ("YES".equalsIgnoreCase(rs.getString(2))) {
              wrong.add("it starts over at its end (CYCLE)");
            }
          }
        }
      }
      default -> throw new IllegalArgumentException(String.valueOf(sql.dialect));
    }
    return wrong.isEmpty() ? null : "the token sequence " + seq + " cannot give fencing tokens: "
        + String.join("; ", wrong) + ". Fix: " + fix;
  }
}
