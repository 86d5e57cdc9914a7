package io.locksmith.jdbc;

import io.locksmith.BackendUnavailableException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one {@code LISTEN} connection of a PostgreSQL client: a thread that holds a connection in
 * autocommit, listens on the client's own channel and hands each notification's payload on. Releases
 * address one waiter by its client's channel, so a release wakes one process, not every listener.
 *
 * <p>The connection is checked every few seconds with a query under the command timeout (a half-open
 * connection would otherwise never fail); on failure it is replaced, and {@code onReconnect} runs, since
 * notifications sent meanwhile are lost. Only this class touches the PostgreSQL driver's own API.
 */
final class PgListener {
  private static final Logger log = LoggerFactory.getLogger(PgListener.class);
  private static final int POLL_MILLIS = 250;
  private static final long CHECK_NANOS = TimeUnit.SECONDS.toNanos(5);

  private final DataSource dataSource;
  private final String channel;
  private final Consumer<String> onPayload;
  private final Runnable onReconnect;
  private final Duration timeout;
  private final Thread thread;
  private volatile boolean closed;
  private volatile Connection connection; // the listener thread's, after start
  private volatile PGConnection pg;
  private long lastCheck;

  PgListener(DataSource dataSource, String channel, Consumer<String> onPayload, Runnable onReconnect,
      Duration timeout, String clientId) {
    this.dataSource = dataSource;
    this.channel = channel;
    this.onPayload = onPayload;
    this.onReconnect = onReconnect;
    this.timeout = timeout;
    this.thread = new Thread(this::loop, "locksmith-pg-listen-" + clientId);
    this.thread.setDaemon(true);
  }

  /**
   * Connects and listens, then starts the thread.
   *
   * @throws BackendUnavailableException if the first connection fails
   */
  void start() {
    // bounded like every other call: a pool with no free connection may block getConnection() far longer
    java.util.concurrent.CompletableFuture<Void> connected = new java.util.concurrent.CompletableFuture<>();
    Thread opener = new Thread(() -> {
      try {
        connect();
        if (!connected.complete(null)) {
          dropConnection(); // start() gave up meanwhile
        }
      } catch (SQLException | RuntimeException e) {
        connected.completeExceptionally(e);
      }
    }, thread.getName() + "-open");
    opener.setDaemon(true);
    opener.start();
    try {
      connected.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      closed = true;
      if (!connected.completeExceptionally(e)) {
        dropConnection();
      }
      throw new BackendUnavailableException("no connection for LISTEN within " + timeout.toMillis()
          + " ms (unreachable, or no pooled connection free)");
    } catch (java.util.concurrent.ExecutionException e) {
      throw new BackendUnavailableException("cannot open the LISTEN connection: " + e.getCause().getMessage(),
          e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      closed = true;
      connected.cancel(false);
      throw new BackendUnavailableException("interrupted while opening the LISTEN connection");
    }
    thread.start();
  }

  private void connect() throws SQLException {
    Connection c = dataSource.getConnection();
    try {
      c.setAutoCommit(true);
      c.setNetworkTimeout(Runnable::run, (int) Math.max(POLL_MILLIS * 4L, timeout.toMillis()));
      try (Statement s = c.createStatement()) {
        s.setQueryTimeout((int) Math.max(1, timeout.toSeconds()));
        s.execute("LISTEN \"" + channel + "\"");
      }
      pg = c.unwrap(PGConnection.class);
      connection = c;
      lastCheck = System.nanoTime();
    } catch (SQLException | RuntimeException e) {
      c.close();
      throw e;
    }
  }

  private void loop() {
    long backoff = 50;
    while (!closed) {
      try {
        if (connection == null) {
          connect();
          backoff = 50;
          log.info("LISTEN connection re-established; waking this client's waiters to re-check");
          onReconnect.run();
        }
        PGNotification[] notes = pg.getNotifications(POLL_MILLIS);
        if (notes != null) {
          for (PGNotification n : notes) {
            try {
              onPayload.accept(n.getParameter());
            } catch (RuntimeException e) {
              log.warn("a wake-up could not be delivered", e);
            }
          }
        }
        if (System.nanoTime() - lastCheck > CHECK_NANOS) {
          try (Statement s = connection.createStatement()) {
            s.setQueryTimeout((int) Math.max(1, timeout.toSeconds()));
            s.execute("SELECT 1");
          }
          lastCheck = System.nanoTime();
        }
      } catch (SQLException | RuntimeException e) {
        if (closed) {
          break;
        }
        log.warn("LISTEN connection failed ({}); waiters re-check on their own until it is back", e.toString());
        dropConnection();
        sleep(backoff);
        backoff = Math.min(2000, backoff * 2);
      }
    }
    if (connection != null) {
      try (Statement s = connection.createStatement()) {
        s.setQueryTimeout(1);
        s.execute("UNLISTEN *"); // before the connection goes back to a pool
      } catch (SQLException ignored) {
        // closing anyway
      }
      dropConnection();
    }
  }

  private void dropConnection() {
    Connection c = connection;
    connection = null;
    pg = null;
    if (c != null) {
      try {
        c.close();
      } catch (SQLException ignored) {
        // already broken
      }
    }
  }

  private void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      closed = true;
    }
  }

  /** Stops listening and gives the connection back; waits up to 2 s for the thread. */
  void close() {
    closed = true;
    try {
      thread.join(2000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
