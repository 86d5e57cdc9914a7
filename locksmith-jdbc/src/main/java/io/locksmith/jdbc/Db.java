package io.locksmith.jdbc;

import io.locksmith.BackendConfigurationException;
import io.locksmith.BackendUnavailableException;
import io.locksmith.LockException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.concurrent.locks.LockSupport;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the backend's blocking JDBC work off the caller's thread, bounded in time: every call gets a
 * deadline of one command timeout that covers waiting for a worker, borrowing a connection from the
 * pool, and the statements (each also carries a query timeout and the connection a network timeout, so
 * the worker itself comes free). A call past its deadline completes with {@link
 * BackendUnavailableException} at once, whatever the pool or the driver are still doing; a result that
 * arrives later is handed to the call's {@code onLate} hook (an acquire gives a late grant back).
 * Serialization failures, deadlocks and lock timeouts reported by the database are retried within the
 * deadline. {@link #inTransaction} runs a unit of work as one READ COMMITTED transaction on a connection of
 * a call. Thread-safe.
 */
final class Db {
  private static final Logger log = LoggerFactory.getLogger(Db.class);

  /** One unit of JDBC work on a borrowed connection, in autocommit unless it says otherwise. */
  @FunctionalInterface
  interface Work<T> {
    T run(Connection connection) throws SQLException;
  }

  /** Work inside {@link #inTransaction}, on the connection the transaction holds. */
  @FunctionalInterface
  interface TxWork<T> {
    T run() throws SQLException;
  }

  /** Thrown by work that wants a retry (a conflict it detected itself, e.g. a missing meta row). */
  static final class Retry extends SQLException {
    private static final long serialVersionUID = 1L;

    Retry(String reason) {
      super(reason, "40001");
    }
  }

  private final DataSource dataSource;
  private final long timeoutNanos;
  private final int queryTimeoutSeconds;
  private final ThreadPoolExecutor workers;
  private final ScheduledExecutorService timer;
  private final Executor networkTimeoutExecutor = Runnable::run;
  private volatile boolean networkTimeoutUnsupported;
  private final AtomicInteger busy = new AtomicInteger();

  Db(DataSource dataSource, Duration commandTimeout, int maxConcurrency, String clientId) {
    this.dataSource = dataSource;
    this.timeoutNanos = commandTimeout.toNanos();
    this.queryTimeoutSeconds = (int) Math.max(1, (commandTimeout.toMillis() + 999) / 1000);
    AtomicInteger n = new AtomicInteger();
    this.workers = new ThreadPoolExecutor(maxConcurrency, maxConcurrency, 30, TimeUnit.SECONDS,
        new LinkedBlockingQueue<>(), r -> {
          Thread t = new Thread(r, "locksmith-jdbc-" + clientId + "-" + n.incrementAndGet());
          t.setDaemon(true);
          return t;
        });
    this.workers.allowCoreThreadTimeOut(true);
    ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, r -> {
      Thread th = new Thread(r, "locksmith-jdbc-timer-" + clientId);
      th.setDaemon(true);
      return th;
    });
    t.setRemoveOnCancelPolicy(true);
    // A no-op that is always due before any call's deadline (its period is at most one command
    // timeout): a deadline scheduled behind it never becomes the head of the timer's queue, so
    // scheduling one does not wake the timer thread (a wake-up per call otherwise, as the previous
    // deadline was cancelled and removed). The timer thread runs it and sleeps again, twice a timeout.
    long period = timeoutNanos / 2 >= TimeUnit.MILLISECONDS.toNanos(10) ? timeoutNanos / 2 : timeoutNanos;
    t.scheduleAtFixedRate(() -> { }, period, period, TimeUnit.NANOSECONDS);
    this.timer = t;
  }

  Duration commandTimeout() {
    return Duration.ofNanos(timeoutNanos);
  }

  ScheduledExecutorService timer() {
    return timer;
  }

  /**
   * Runs {@code work} on a worker within one command timeout.
   *
   * @param what a short description for error messages, e.g. {@code "acquire 'x'"}
   * @param onLate called with the result if the work succeeded after the caller was already told it
   *     timed out; may be null
   */
  <T> CompletableFuture<T> call(String what, Work<T> work, Consumer<T> onLate) {
    return call(what, work, null, null, late(onLate));
  }

  /**
   * How a call's work ended, told once the worker is done with it (in time or not): the value, or null
   * if the work failed or never ran, and whether the caller received that value (false: the call had
   * already completed, by its timeout).
   */
  @FunctionalInterface
  interface Settled<T> {
    void settled(T value, boolean answered);
  }

  private static <T> Settled<T> late(Consumer<T> onLate) {
    return onLate == null ? null : (value, answered) -> {
      if (value != null && !answered) {
        onLate.accept(value);
      }
    };
  }

  /**
   * Like {@link #call(String, Work, Consumer)}, but the work is handed to a worker only once {@code gate}
   * has completed (in whatever way), still within the call's one command timeout counted from now, and
   * {@code settled} hears how the work ended once the worker is done with it.
   */
  <T> CompletableFuture<T> call(String what, Work<T> work, CompletionStage<?> gate, Settled<T> settled) {
    return call(what, work, null, gate, settled);
  }

  /** {@link #callBare(String, BareWork, Consumer)} behind a gate, with the settle hook (see above). */
  <T> CompletableFuture<T> callBare(String what, BareWork<T> work, CompletionStage<?> gate, Settled<T> settled) {
    return call(what, null, work, gate, settled);
  }

  /** Calls submitted and not yet settled (queued, gated or running): for tests that wait for quiet. */
  int busyCalls() {
    return busy.get();
  }

  private <T> CompletableFuture<T> call(String what, Work<T> work, BareWork<T> bare, CompletionStage<?> gate,
      Settled<T> settled) {
    CompletableFuture<T> result = new CompletableFuture<>();
    long deadline = System.nanoTime() + timeoutNanos;
    java.util.concurrent.atomic.AtomicReference<SQLException> conflict = new java.util.concurrent.atomic.AtomicReference<>();
    java.util.concurrent.ScheduledFuture<?> expiry;
    try {
      expiry = timer.schedule(() -> {
        SQLException seen = conflict.get();
        result.completeExceptionally(seen != null ? conflict(what, seen)
            : new BackendUnavailableException("the database did not answer " + what + " within "
                + commandTimeout().toMillis() + " ms (unreachable, or no pooled connection free)"));
      }, timeoutNanos, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException closed) {
      return CompletableFuture.failedFuture(new IllegalStateException("the JDBC lock backend is closed"));
    }
    busy.incrementAndGet();
    Runnable task = () -> {
      T value = null;
      boolean answered = false;
      try {
        if (result.isDone()) {
          return; // timed out in the queue or at the gate: nothing was sent
        }
        if (bare != null) {
          try {
            value = bare.run();
          } catch (SQLException e) {
            Kind kind = classify(e);
            throw translate(what, e, kind == Kind.RETRY ? Kind.UNAVAILABLE : kind);
          }
        } else {
          value = runWithRetries(what, work, deadline, result, conflict);
        }
        answered = result.complete(value);
      } catch (Throwable e) {
        result.completeExceptionally(e);
      } finally {
        expiry.cancel(false);
        try {
          if (settled != null) {
            settled.settled(value, answered);
          }
        } catch (RuntimeException e) {
          log.warn("{}: handling its outcome failed", what, e);
        } finally {
          busy.decrementAndGet();
        }
      }
    };
    Runnable submit = () -> {
      try {
        workers.execute(task);
      } catch (RejectedExecutionException closed) {
        expiry.cancel(false);
        result.completeExceptionally(new IllegalStateException("the JDBC lock backend is closed"));
        try {
          if (settled != null) {
            settled.settled(null, false);
          }
        } finally {
          busy.decrementAndGet();
        }
      }
    };
    if (gate == null || gate.toCompletableFuture().isDone()) {
      submit.run();
    } else {
      gate.whenComplete((v, f) -> submit.run());
    }
    return result;
  }

  private <T> T runWithRetries(String what, Work<T> work, long deadline, CompletableFuture<?> abandoned,
      java.util.concurrent.atomic.AtomicReference<SQLException> conflict) {
    int attempt = 0;
    while (true) {
      attempt++;
      Connection c = null;
      try {
        c = dataSource.getConnection();
        if (abandoned != null && abandoned.isDone()) {
          throw new BackendUnavailableException("abandoned: " + what); // timed out while borrowing
        }
        int networkTimeoutBefore = prepare(c, deadline);
        try {
          return work.run(c);
        } finally {
          if (!c.getAutoCommit()) {
            try {
              c.rollback();
            } catch (SQLException ignored) {
              // the connection is broken; the pool finds out
            }
            c.setAutoCommit(true);
          }
          restoreNetworkTimeout(c, networkTimeoutBefore);
        }
      } catch (SQLException e) {
        Kind kind = classify(e);
        // asked while the connection is still ours: once given back, every connection looks closed
        if (kind == Kind.OTHER && c != null && isBroken(c)) {
          kind = Kind.UNAVAILABLE; // e.g. a pool's "Connection is closed": the link, not the statement
        }
        if (kind == Kind.READ_ONLY && c != null) {
          evict(c); // its session stays on the read-only server; the pool's next one may reach the primary
        }
        long left = deadline - System.nanoTime();
        if (kind == Kind.RETRY) {
          conflict.set(e);
        }
        if (kind == Kind.RETRY && left > TimeUnit.MILLISECONDS.toNanos(2)
            && (abandoned == null || !abandoned.isDone())) {
          log.debug("{}: retrying after {} (attempt {})", what, e.toString(), attempt);
          long pause = Math.min(left / 2, TimeUnit.MILLISECONDS.toNanos(
              ThreadLocalRandom.current().nextLong(1, 2 + Math.min(50, 1L << Math.min(attempt, 6)))));
          LockSupport.parkNanos(pause);
          continue;
        }
        if (kind == Kind.RETRY) {
          throw conflict(what, e);
        }
        throw translate(what, e, kind);
      } finally {
        closeQuietly(c);
      }
    }
  }

  private static void closeQuietly(Connection c) {
    if (c != null) {
      try {
        c.close();
      } catch (SQLException e) {
        log.debug("closing a connection: {}", e.toString());
      }
    }
  }

  /**
   * Ends a connection's database session instead of giving it back for reuse: the physical connection
   * is aborted, and a statement on the pooled handle then fails as a broken link, which is how pools
   * (HikariCP among them) learn to discard it. The caller still closes the handle.
   */
  static void evict(Connection c) {
    try {
      Connection physical = c.isWrapperFor(Connection.class) ? c.unwrap(Connection.class) : c;
      physical.abort(Runnable::run);
    } catch (SQLException | RuntimeException | AbstractMethodError e) {
      log.debug("aborting a connection: {}", e.toString());
    }
    try (java.sql.Statement s = c.createStatement()) {
      s.execute("SELECT 1"); // fails on the aborted link: the pool marks the connection broken
    } catch (SQLException expected) {
      // the point
    }
  }

  private static Conflict conflict(String what, SQLException e) {
    return new Conflict("the database kept refusing to " + what + " with conflicts until the command timeout: "
        + e.getMessage() + " [SQLState " + e.getSQLState() + "]", e);
  }

  /**
   * Serialization failures, deadlocks or lock timeouts until the call's deadline. An acquisition treats
   * it as "not granted this time" and goes on waiting; everything else reports it as unavailable.
   */
  static final class Conflict extends BackendUnavailableException {
    private static final long serialVersionUID = 1L;

    Conflict(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /**
   * An acquire attempt that ran into conflicts until its deadline is a refusal: the acquisition retries
   * within its wait (after {@code retryMillis}), and a caller that does not wait gets "not acquired".
   */
  static <T> java.util.concurrent.CompletionStage<T> conflictAsRefusal(java.util.concurrent.CompletionStage<T> stage,
      T refusal) {
    return stage.handle((value, failure) -> {
      if (failure == null) {
        return CompletableFuture.completedFuture(value);
      }
      Throwable cause = failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
          ? failure.getCause() : failure;
      if (cause instanceof Conflict) {
        log.debug("{}; not granted this time", cause.getMessage());
        return CompletableFuture.completedFuture(refusal);
      }
      return CompletableFuture.<T>failedFuture(cause);
    }).thenCompose(f -> f);
  }

  /** @return the connection's network timeout before this call set its own, or -1 if none was set */
  private int prepare(Connection c, long deadline) throws SQLException {
    if (!c.getAutoCommit()) {
      c.setAutoCommit(true);
    }
    if (!networkTimeoutUnsupported) {
      try {
        int before = c.getNetworkTimeout();
        int ms = (int) Math.max(1, Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(timeoutNanos)));
        if (before != ms) {
          c.setNetworkTimeout(networkTimeoutExecutor, ms);
          return before;
        }
      } catch (SQLFeatureNotSupportedException | UnsupportedOperationException | AbstractMethodError e) {
        networkTimeoutUnsupported = true;
      }
    }
    return -1;
  }

  /**
   * Gives the connection back with the network timeout it was borrowed with: the connection is the
   * application's, and not every pool resets it (HikariCP does; others hand it to the next borrower
   * as it is, which would then see its reads cut off after our command timeout).
   */
  void restoreNetworkTimeout(Connection c, int before) {
    if (before < 0) {
      return;
    }
    try {
      c.setNetworkTimeout(networkTimeoutExecutor, before);
    } catch (SQLException | RuntimeException | AbstractMethodError e) {
      log.debug("could not restore the network timeout of a borrowed connection: {}", e.toString());
    }
  }

  /**
   * Sets the call's network timeout on a connection that outlives the call (a pinned lock's).
   *
   * @return the timeout to give back with {@link #restoreNetworkTimeout}, or -1
   */
  int pinNetworkTimeout(Connection c) throws SQLException {
    return prepare(c, 0);
  }

  /** Prepares a statement with the query timeout set. */
  PreparedStatement prepare(Connection c, String sql) throws SQLException {
    PreparedStatement ps = c.prepareStatement(sql);
    ps.setQueryTimeout(queryTimeoutSeconds);
    return ps;
  }

  /** Runs {@code work} in a READ COMMITTED transaction; the work commits, a failure is rolled back here. */
  static <T> T inTransaction(Connection c, TxWork<T> work) throws SQLException {
    int isolation = c.getTransactionIsolation();
    if (isolation != Connection.TRANSACTION_READ_COMMITTED) {
      c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
    }
    c.setAutoCommit(false);
    try {
      T result = work.run();
      if (!c.getAutoCommit()) {
        c.commit(); // a refusal's read-only work
      }
      return result;
    } catch (SQLException | RuntimeException e) {
      c.rollback();
      throw e;
    } finally {
      c.setAutoCommit(true);
      if (isolation != Connection.TRANSACTION_READ_COMMITTED) {
        c.setTransactionIsolation(isolation);
      }
    }
  }

  private static boolean isBroken(Connection c) {
    try {
      return c.isClosed() || !c.isValid(1);
    } catch (SQLException e) {
      return true;
    }
  }

  /** Blocking work that manages its own connections. */
  @FunctionalInterface
  interface BareWork<T> {
    T run() throws SQLException;
  }

  /**
   * Runs {@code work}, which borrows its own connections, on a worker within one command timeout, like
   * {@link #call} but without borrowing a connection for it and without retries.
   */
  <T> CompletableFuture<T> callBare(String what, BareWork<T> work, Consumer<T> onLate) {
    return call(what, null, work, null, late(onLate));
  }

  /**
   * What a failure means. CONFIGURATION: the table, a column or the sequence is missing, or a privilege
   * is: it will not pass by itself. READ_ONLY: the server accepts no writes (a replica, or an old primary
   * after a failover): treated as an outage, as it usually passes when the pool reaches the new primary.
   * OTHER: any other refusal by the database (a constraint, a trigger, a syntax the server does not
   * accept): not transient either.
   */
  enum Kind { UNAVAILABLE, RETRY, CONFIGURATION, READ_ONLY, OTHER }

  /** One place that knows which SQL failures mean what. */
  static Kind classify(SQLException e) {
    String state = e.getSQLState() == null ? "" : e.getSQLState();
    int code = e.getErrorCode();
    if (e instanceof Retry || state.equals("40001") || state.equals("40P01") || state.equals("HYT00")
        || state.equals("55P03") // PostgreSQL lock_not_available
        || code == 1213 || code == 1205 // MariaDB deadlock, lock wait timeout
        || (state.equals("23505") && e.getMessage() != null && e.getMessage().contains("PRIMARY"))) {
      // 23505 in H2: two MERGEs inserted the same new key; the loser retries and finds the row
      return Kind.RETRY;
    }
    if (e instanceof SQLTransientConnectionException || e instanceof SQLNonTransientConnectionException
        || e instanceof SQLRecoverableException || e instanceof SQLTimeoutException
        || state.startsWith("08") || state.equals("57P01") || state.equals("57P02") || state.equals("57P03")
        || state.equals("57014") || state.equals("70100")
        || state.isEmpty() // no SQLState: raised by the driver or the pool, not by the database
        || code == 1927 /* MariaDB connection killed */) {
      return Kind.UNAVAILABLE;
    }
    if (state.equals("25006") // PostgreSQL read_only_sql_transaction
        || code == 1290 || code == 1836 // MariaDB --read-only (ER_OPTION_PREVENTS_STATEMENT), read-only mode
        || code == 90097) { // H2 database is read-only
      return Kind.READ_ONLY;
    }
    if (state.equals("42P01") || state.equals("42703") || state.equals("42501") || state.equals("3F000")
        || state.equals("42S02") || state.equals("42S22") // standard: no such table, no such column
        || code == 1146 || code == 1054 || code == 1142 || code == 1143 || code == 1044 || code == 1049
        // MariaDB: no such table, column; table, column, database access denied; unknown database
        || code == 42102 || code == 42103 || code == 42104 || code == 42122 || code == 90036 || code == 90079
        || code == 90096) { // H2: no such table, column, sequence, schema; not enough rights
      return Kind.CONFIGURATION;
    }
    return Kind.OTHER;
  }

  private static RuntimeException translate(String what, SQLException e, Kind kind) {
    String detail = e.getMessage() + " [SQLState " + e.getSQLState() + ", code " + e.getErrorCode() + "]";
    return switch (kind) {
      case CONFIGURATION -> new BackendConfigurationException("the database refused " + what + " because the lock"
          + " tables, a column, the token sequence or a permission on them is missing (check the table name, the"
          + " schema, the DDL of JdbcLockClient.ddl and the database user's privileges): " + detail, e);
      case READ_ONLY -> new BackendUnavailableException("the database could not " + what + ": the server is"
          + " read-only (a replica, or an old primary after a failover; the connection was discarded): " + detail, e);
      case OTHER -> new LockException("the database refused " + what + ": " + detail, e);
      default -> new BackendUnavailableException("the database could not " + what + ": " + detail, e);
    };
  }

  void close() {
    workers.shutdown();
    timer.shutdownNow();
    try {
      if (!workers.awaitTermination(2, TimeUnit.SECONDS)) {
        workers.shutdownNow();
      }
    } catch (InterruptedException e) {
      workers.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }
}
