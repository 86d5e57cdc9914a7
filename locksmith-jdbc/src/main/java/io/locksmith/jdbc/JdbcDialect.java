package io.locksmith.jdbc;

import io.locksmith.BackendConfigurationException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The databases {@link JdbcLockClient} speaks to. Each has its own DDL ({@link JdbcLockClient#ddl}) and
 * statements; the dialect is detected from the JDBC metadata when the builder is not given one.
 * Immutable and thread-safe.
 */
public enum JdbcDialect {
  /**
   * PostgreSQL 12 or later. Expiry by {@code clock_timestamp()} (the statement's real time, not the
   * transaction start that {@code now()} gives); waiters are woken by {@code LISTEN/NOTIFY}.
   */
  POSTGRESQL("postgresql.sql"),
  /**
   * MariaDB 10.3 or later (tokens come from a {@code SEQUENCE}, which MySQL does not have). Expiry by
   * {@code UTC_TIMESTAMP(6)}, independent of the session time zone; waiters poll with capped
   * exponential backoff and jitter.
   */
  MARIADB("mariadb.sql"),
  /**
   * H2 2.x, embedded or in server mode. Expiry by {@code CURRENT_TIMESTAMP}; waiters poll with capped
   * exponential backoff and jitter.
   */
  H2("h2.sql");

  private final String resource;

  JdbcDialect(String resource) {
    this.resource = resource;
  }

  /**
   * @param table the table name (see {@link JdbcLockClient.Builder#table(String)})
   * @return the DDL statements of this dialect for {@code table}, each without the trailing {@code ;}
   */
  List<String> ddlStatements(String table) {
    List<String> statements = new ArrayList<>();
    StringBuilder current = new StringBuilder();
    for (String line : ddl(table).split("\n")) {
      String code = line.contains("--") ? line.substring(0, line.indexOf("--")) : line;
      if (code.isBlank()) {
        continue;
      }
      current.append(code.stripTrailing()).append('\n');
      if (code.stripTrailing().endsWith(";")) {
        String s = current.toString().strip();
        statements.add(s.substring(0, s.length() - 1));
        current.setLength(0);
      }
    }
    return statements;
  }

  /**
   * @param table the table name
   * @return the DDL script of this dialect for {@code table}, comments included
   */
  String ddl(String table) {
    try (InputStream in = JdbcDialect.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("missing resource " + resource);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8).replace("${table}", table);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Detects the dialect of a connection.
   *
   * @throws BackendConfigurationException for a database this backend does not support (MySQL proper
   *     included: it has no sequences)
   */
  static JdbcDialect detect(DatabaseMetaData meta) throws SQLException {
    String product = String.valueOf(meta.getDatabaseProductName());
    String version = String.valueOf(meta.getDatabaseProductVersion());
    String p = product.toLowerCase(Locale.ROOT);
    if (p.contains("postgresql")) {
      return POSTGRESQL;
    }
    if (p.contains("mariadb") || (p.contains("mysql") && version.toLowerCase(Locale.ROOT).contains("mariadb"))) {
      return MARIADB;
    }
    if (p.equals("h2")) {
      return H2;
    }
    throw new BackendConfigurationException("the database '" + product + " " + version + "' is not supported"
        + " by the JDBC lock backend (PostgreSQL, MariaDB 10.3+ and H2 are; MySQL lacks the SEQUENCE the"
        + " fencing tokens come from)");
  }
}
