package io.locksmith.testkit.h2;

import io.locksmith.testkit.DatabaseDirs;
import io.locksmith.testkit.SharedTopology;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.UUID;
import org.h2.tools.Server;

/**
 * An H2 database for tests: in memory inside the test JVM ({@link #inMemory()}), or a file database served
 * over TCP by an H2 server in the test JVM ({@link #server()}), which can be stopped and started again
 * on the same port and data. Needs {@code com.h2database:h2} on the test class path.
 *
 * <p>Thread-safety: the lifecycle methods are synchronized. {@link #close()} is idempotent.
 */
public final class H2Database implements AutoCloseable {
  private final String name;
  private final Path dir;
  private final int port;
  private Server server;
  private boolean closed;

  private H2Database(String name, Path dir, int port) {
    this.name = name;
    this.dir = dir;
    this.port = port;
  }

  /** @return a new, empty in-memory database that lives until {@link #close()} */
  public static H2Database inMemory() {
    return new H2Database("mem-" + UUID.randomUUID(), null, -1);
  }

  /**
   * @return a new, empty file database behind a TCP server on 127.0.0.1 and a free port
   * @throws IllegalStateException if the server cannot start
   */
  public static H2Database server() {
    H2Database db = new H2Database("locks", DatabaseDirs.newDirectory("h2-"), DatabaseDirs.freePort());
    db.startServer();
    return db;
  }

  /**
   * One in-memory database for the whole test run, closed when the run ends:
   * {@code @RegisterExtension static final SharedTopology<H2Database> H2 = H2Database.shared();}
   *
   * @return the extension
   */
  public static SharedTopology<H2Database> shared() {
    return SharedTopology.of(H2Database.class, H2Database::inMemory);
  }

  private void startServer() {
    try {
      server = Server.createTcpServer("-tcpPort", String.valueOf(port), "-baseDir", dir.toString(),
          "-ifNotExists").start();
    } catch (SQLException e) {
      throw new IllegalStateException("cannot start the H2 TCP server: " + e.getMessage(), e);
    }
  }

  /** @return the JDBC URL, with user {@code sa} and an empty password */
  public String jdbcUrl() {
    return dir == null ? "jdbc:h2:mem:" + name + ";DB_CLOSE_DELAY=-1"
        : "jdbc:h2:tcp://127.0.0.1:" + port + "/./" + name;
  }

  /** @return a new non-pooling data source for this database */
  public javax.sql.DataSource dataSource() {
    org.h2.jdbcx.JdbcDataSource ds = new org.h2.jdbcx.JdbcDataSource();
    ds.setURL(jdbcUrl());
    ds.setUser("sa");
    ds.setPassword("");
    return ds;
  }

  /** @return the TCP port of a {@link #server()} database */
  public int port() {
    requireServer();
    return port;
  }

  /** Stops the TCP server of a {@link #server()} database (its clients' connections break). */
  public synchronized void stop() {
    requireServer();
    if (server != null) {
      server.stop();
      server = null;
    }
  }

  /** Starts the TCP server again on the same port and data. */
  public synchronized void restart() {
    requireServer();
    stop();
    startServer();
  }

  private void requireServer() {
    if (dir == null) {
      throw new IllegalStateException("an in-memory database has no server");
    }
  }

  /** Drops the database and stops its server. Idempotent. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (dir == null) {
      try (java.sql.Connection c = dataSource().getConnection();
          java.sql.Statement s = c.createStatement()) {
        s.execute("SHUTDOWN");
      } catch (SQLException ignored) {
        // already gone
      }
      return;
    }
    if (server != null) {
      server.stop();
      server = null;
    }
    DatabaseDirs.deleteQuietly(dir);
  }

  @Override
  public String toString() {
    return "H2Database[" + jdbcUrl() + "]";
  }
}
