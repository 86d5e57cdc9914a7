package io.locksmith.jdbc;

import io.locksmith.LockScan.End;
import io.locksmith.internal.Futures;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * For operators: the exclusive locks that clients of the pinned-connection modes ({@link
 * JdbcLockMode#ROW_LOCK}, {@link JdbcLockMode#ADVISORY}) hold in a namespace. Those locks live in an open
 * transaction or a database session, not in a lease row, so a lease-mode client's {@code inspect} and
 * {@link JdbcLockScan} do not see them; this reads them from the database itself.
 *
 * <p>What can be known differs by database. A row lock is found everywhere by probing its row without
 * waiting ({@code SELECT … FOR UPDATE NOWAIT}, rolled back at once: an application attempt at that very
 * moment is refused and polls again). The owner and fencing token the holder wrote are part of its open
 * transaction and stay invisible to every other session until it ends. The holding session is found
 * too: on PostgreSQL exactly (advisory: {@code pg_locks}; row lock: the row's {@code xmax} against the
 * transaction locks in {@code pg_locks}) and described from {@code pg_stat_activity}; on MariaDB and H2
 * {@link #find} queues a second probe behind the holder for at most {@value #QUEUE_MILLIS} ms and reads
 * whom it waits for ({@code information_schema.INNODB_LOCK_WAITS}, which needs the {@code PROCESS}
 * privilege; H2's {@code INFORMATION_SCHEMA.SESSIONS.BLOCKER_ID}, which needs an admin user), and reports
 * no session where that is not allowed. Advisory locks store no name (their key is a hash of namespace
 * and name), so they can be counted but not listed.
 *
 * <p>Every method takes a client of any mode, uses its data source, table and namespace, and runs on its
 * workers within its command timeout. Stateless and thread-safe.
 */
public final class JdbcPinnedLocks {
  private JdbcPinnedLocks() {}

  /** MariaDB, H2: how long the second probe queues behind the holder to learn who it is, at most. */
  static final long QUEUE_MILLIS = 1500;
  /** H2: as long, but below its whole-second wait. */
  private static final long H2_QUEUE_MILLIS = 800;
  /**
   * The queued probe's own timeout in whole seconds, should the watcher be unable to cut it short (H2 goes
   * on waiting after {@code CANCEL_SESSION}; MariaDB stops at {@code KILL QUERY}).
   */
  private static long queueWaitSeconds(JdbcDialect dialect) {
    return dialect == JdbcDialect.H2 ? 1 : 2;
  }
  /** How long {@link #terminate} lets PostgreSQL wait for the ended session to exit. */
  private static final long TERMINATE_WAIT_MILLIS = 3000;
  /** Row-lock rows probed per call of {@link #rowLocks}: each call stays well inside a command timeout. */
  private static final int PROBES_PER_CALL = 100;
  /** The most row-lock rows of a namespace {@link #rowLocks} reads. */
  static final int MAX_ROWS = 100_000;

  /**
   * The database session that holds a lock, as the database shows it. The fields other than {@code id}
   * are null where the database does not tell them or the user running the query may not see them (on
   * PostgreSQL another user's session without {@code pg_read_all_stats}).
   *
   * @param id the database's id of the session: the PostgreSQL backend pid ({@code pg_terminate_backend}
   *     takes it), the MariaDB connection id ({@code KILL CONNECTION} takes it), the H2 session id ({@code
   *     ABORT_SESSION} takes it)
   * @param clientAddress the client's address (and port where known), or {@code "local socket"}
   * @param applicationName PostgreSQL: the client's {@code application_name} (often empty); H2: its client
   *     info; MariaDB: null
   * @param user the database user
   * @param sessionStart when the session (connection) began; null on MariaDB
   * @param transactionStart when its current transaction began (row lock: when the lock was taken, since
   *     the lock is its transaction's first statement); null when idle outside a transaction, and on H2
   */
  public record Session(long id, String clientAddress, String applicationName, String user, Instant sessionStart,
      Instant transactionStart) {}

  /**
   * A pinned-mode lock found held.
   *
   * @param mode {@link JdbcLockMode#ROW_LOCK} or {@link JdbcLockMode#ADVISORY}
   * @param name the lock name
   * @param session the holding session, empty where it cannot be identified (see the class comment)
   */
  public record Hold(JdbcLockMode mode, String name, Optional<Session> session) {
    /** @throws NullPointerException if a component is null */
    public Hold {
      Objects.requireNonNull(mode, "mode");
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(session, "session");
    }
  }

  /**
   * The row locks found held by {@link #rowLocks}.
   *
   * @param holds the holds, by name
   * @param end {@link End#LIMIT_REACHED} if more were held than asked for (or the namespace has more than
   *     {@value #MAX_ROWS} rows), {@link End#OUT_OF_TIME} if the budget ran out first
   */
  public record Listing(List<Hold> holds, End end) {
    /** @throws NullPointerException if a component is null */
    public Listing {
      holds = List.copyOf(holds);
      Objects.requireNonNull(end, "end");
    }
  }

  /**
   * @param dialect a database
   * @return the pinned modes it offers: row lock everywhere, advisory on PostgreSQL
   */
  public static List<JdbcLockMode> modes(JdbcDialect dialect) {
    return dialect == JdbcDialect.POSTGRESQL ? List.of(JdbcLockMode.ROW_LOCK, JdbcLockMode.ADVISORY)
        : List.of(JdbcLockMode.ROW_LOCK);
  }

  /**
   * Whether {@code name} is held in {@code mode} by any session other than the probing one.
   *
   * @param client any client of the namespace, table and database to read
   * @param mode {@link JdbcLockMode#ROW_LOCK} or {@link JdbcLockMode#ADVISORY}
   * @param name a lock name
   * @return the hold, or empty if none is held
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code mode} is not a pinned mode the client's database offers
   * @throws io.locksmith.BackendUnavailableException if the database does not answer within the command
   *     timeout
   * @throws io.locksmith.LockException if the database refuses the query (e.g. missing privileges)
   */
  public static Optional<Hold> find(JdbcLockClient client, JdbcLockMode mode, String name) {
    check(client, mode);
    Objects.requireNonNull(name, "name");
    Db db = client.db();
    String namespace = client.options().namespace();
    return Futures.join(db.call("find the " + mode + " hold of '" + name + "'", c -> {
      if (mode == JdbcLockMode.ADVISORY) {
        return session(db, c, client.table(), mode, namespace, name).map(s -> new Hold(mode, name, Optional.of(s)));
      }
      if (!rowHeld(db, c, client.table(), namespace, name)) {
        return Optional.<Hold>empty();
      }
      Optional<Session> s = client.dialect() == JdbcDialect.POSTGRESQL
          ? session(db, c, client.table(), mode, namespace, name) : queueBehind(client, c, namespace, name);
      return Optional.of(new Hold(mode, name, s));
    }, null));
  }

  /**
   * Whether {@code name} is held in {@code mode} by any session other than the probing one, without
   * identifying the holder (on MariaDB and H2 quicker than {@link #find}).
   *
   * @param client any client of the namespace, table and database to read
   * @param mode {@link JdbcLockMode#ROW_LOCK} or {@link JdbcLockMode#ADVISORY}
   * @param name a lock name
   * @return true if held
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code mode} is not a pinned mode the client's database offers
   * @throws io.locksmith.BackendUnavailableException if the database does not answer within the command
   *     timeout
   * @throws io.locksmith.LockException if the database refuses the query (e.g. missing privileges)
   */
  public static boolean held(JdbcLockClient client, JdbcLockMode mode, String name) {
    check(client, mode);
    Objects.requireNonNull(name, "name");
    if (mode == JdbcLockMode.ADVISORY) {
      return find(client, mode, name).isPresent();
    }
    Db db = client.db();
    return Futures.join(db.call("probe the row lock '" + name + "'", c -> rowHeld(db, c, client.table(),
        client.options().namespace(), name), null));
  }

  /**
   * The row locks held in the client's namespace: each of its row-lock rows is probed without waiting.
   *
   * @param client any client of the namespace, table and database to read
   * @param limit the most holds to report, at least 1
   * @param budget how long the probing may take in all (each call of it also within the command timeout)
   * @return the holds found, by name
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code limit} is below 1
   * @throws io.locksmith.BackendUnavailableException if the database does not answer within the command
   *     timeout
   * @throws io.locksmith.LockException if the database refuses a query
   */
  public static Listing rowLocks(JdbcLockClient client, int limit, Duration budget) {
    Objects.requireNonNull(client, "client");
    Objects.requireNonNull(budget, "budget");
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be at least 1, was " + limit);
    }
    Db db = client.db();
    String namespace = client.options().namespace();
    String table = client.table();
    List<String> names = Futures.join(db.call("read the namespace's row-lock rows", c -> {
      List<String> all = new ArrayList<>();
      try (PreparedStatement ps = db.prepare(c, "SELECT lock_name FROM " + table
          + " WHERE namespace = ? AND kind = 'R' ORDER BY lock_name")) {
        ps.setMaxRows(MAX_ROWS + 1);
        ps.setString(1, namespace);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            all.add(rs.getString(1));
          }
        }
      }
      return all;
    }, null));
    End end = names.size() > MAX_ROWS ? End.LIMIT_REACHED : End.FINISHED;
    long deadline = System.nanoTime() + budget.toNanos();
    List<Hold> holds = new ArrayList<>();
    for (int from = 0; from < Math.min(names.size(), MAX_ROWS) && holds.size() <= limit; from += PROBES_PER_CALL) {
      if (System.nanoTime() - deadline > 0) {
        end = End.OUT_OF_TIME;
        break;
      }
      List<String> batch = names.subList(from, Math.min(Math.min(names.size(), MAX_ROWS), from + PROBES_PER_CALL));
      holds.addAll(Futures.join(db.call("probe " + batch.size() + " row locks", c -> {
        List<Hold> held = new ArrayList<>();
        for (String name : batch) {
          if (rowHeld(db, c, table, namespace, name)) {
            held.add(new Hold(JdbcLockMode.ROW_LOCK, name, client.dialect() == JdbcDialect.POSTGRESQL
                ? session(db, c, table, JdbcLockMode.ROW_LOCK, namespace, name) : Optional.empty()));
          }
        }
        return held;
      }, null)));
    }
    if (holds.size() > limit) {
      return new Listing(holds.subList(0, limit), End.LIMIT_REACHED);
    }
    return new Listing(holds, end);
  }

  /**
   * Counts the advisory locks of Locksmith's form (one 64-bit key) held in the client's database, by any
   * application and namespace — also by tools that are not Locksmith (e.g. a migration tool's advisory
   * lock): their keys are hashes, so neither can be read back.
   *
   * @param client a client on PostgreSQL
   * @return the number of such advisory locks granted
   * @throws NullPointerException if {@code client} is null
   * @throws IllegalArgumentException if the client's database is not PostgreSQL
   * @throws io.locksmith.BackendUnavailableException if the database does not answer within the command
   *     timeout
   * @throws io.locksmith.LockException if the database refuses the query (e.g. missing privileges)
   */
  public static long advisoryLocks(JdbcLockClient client) {
    check(client, JdbcLockMode.ADVISORY);
    Db db = client.db();
    return Futures.join(db.call("count the advisory locks", c -> {
      try (PreparedStatement ps = db.prepare(c, "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory'"
          + " AND granted AND objsubid = 1 AND " + THIS_DATABASE); ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }, null));
  }

  /**
   * Ends the PostgreSQL session that holds {@code name} in {@code mode} ({@code pg_terminate_backend}),
   * which frees the lock: the holder's transaction is rolled back or its session closed. Its client
   * finds the pinned connection broken at its next check and reports the lease lost. MariaDB and H2
   * offer no such statement for another client's session through JDBC.
   *
   * @param client a client on PostgreSQL 14 or later (the waiting form of {@code pg_terminate_backend})
   *     whose database user may terminate the holder's session (a superuser, the same user, or a member of
   *     {@code pg_signal_backend})
   * @param mode {@link JdbcLockMode#ROW_LOCK} or {@link JdbcLockMode#ADVISORY}
   * @param name a lock name
   * @return the session that was signalled to end (it has exited, or exits within moments), or empty if no
   *     holding session was found (it let go meanwhile, or is not identifiable)
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if the database is not PostgreSQL or {@code mode} not a pinned mode
   * @throws io.locksmith.BackendUnavailableException if the database does not answer within the command
   *     timeout
   * @throws io.locksmith.LockException if the database refuses (e.g. not allowed to end that session)
   */
  public static Optional<Session> terminate(JdbcLockClient client, JdbcLockMode mode, String name) {
    check(client, mode);
    Objects.requireNonNull(name, "name");
    if (client.dialect() != JdbcDialect.POSTGRESQL) {
      throw new IllegalArgumentException("only PostgreSQL can end another client's session through JDBC, not "
          + client.dialect());
    }
    Db db = client.db();
    String namespace = client.options().namespace();
    return Futures.join(db.call("end the session holding '" + name + "'", c -> {
      Optional<Session> holder = session(db, c, client.table(), mode, namespace, name);
      if (holder.isEmpty()) {
        return holder;
      }
      // the pid must still hold the lock as the statement runs: a pid read a moment ago may have let go
      try (PreparedStatement ps = db.prepare(c, "SELECT pg_terminate_backend(pid, " + TERMINATE_WAIT_MILLIS
          + ") FROM (" + holderQuery(client.table(), mode) + ") h WHERE pid = ?")) {
        int i = bind(ps, mode, namespace, name);
        ps.setLong(i, holder.get().id());
        try (ResultSet rs = ps.executeQuery()) {
          // a row: the session still held it and was signalled; false only means it took longer than the wait
          // to exit (it still ends, and the lock with it), so it is reported as ended, not as unidentified
          return rs.next() ? holder : Optional.<Session>empty();
        }
      }
    }, null));
  }

  private static void check(JdbcLockClient client, JdbcLockMode mode) {
    Objects.requireNonNull(client, "client");
    Objects.requireNonNull(mode, "mode");
    if (!modes(client.dialect()).contains(mode)) {
      throw new IllegalArgumentException(mode == JdbcLockMode.LEASE ? "LEASE is not a pinned mode"
          : mode + " locks do not exist on " + client.dialect());
    }
  }

  /** Advisory locks are per database: the one the client is connected to. */
  private static final String THIS_DATABASE = "database = (SELECT oid FROM pg_database WHERE datname ="
      + " current_database())";

  /** The pids (column {@code pid}) holding the lock: one at most, but never this session's own. */
  private static String holderQuery(String table, JdbcLockMode mode) {
    if (mode == JdbcLockMode.ADVISORY) {
      return "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1"
          + " AND classid::bigint = ? AND objid::bigint = ? AND " + THIS_DATABASE + " AND pid <> pg_backend_pid()";
    }
    // the row version others see carries the locking transaction's id in xmax
    return "SELECT l.pid FROM pg_locks l, " + table + " t WHERE t.namespace = ? AND t.kind = 'R'"
        + " AND t.lock_name = ? AND l.locktype = 'transactionid' AND l.mode = 'ExclusiveLock' AND l.granted"
        + " AND l.transactionid::text = t.xmax::text AND l.pid <> pg_backend_pid()";
  }

  private static int bind(PreparedStatement ps, JdbcLockMode mode, String namespace, String name)
      throws SQLException {
    if (mode == JdbcLockMode.ADVISORY) {
      long k = PinnedBackend.advisoryKey(namespace, name);
      ps.setLong(1, (k >>> 32) & 0xffffffffL);
      ps.setLong(2, k & 0xffffffffL);
    } else {
      ps.setString(1, namespace);
      ps.setString(2, name);
    }
    return 3;
  }

  /** PostgreSQL: the session holding the lock, described; empty if none holds it (or none is found). */
  private static Optional<Session> session(Db db, Connection c, String table, JdbcLockMode mode, String namespace,
      String name) throws SQLException {
    try (PreparedStatement ps = db.prepare(c, "SELECT h.pid, host(a.client_addr), a.client_port,"
        + " a.application_name, a.usename, a.backend_start, a.xact_start FROM (" + holderQuery(table, mode)
        + ") h LEFT JOIN pg_stat_activity a ON a.pid = h.pid")) {
      bind(ps, mode, namespace, name);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return Optional.empty();
        }
        String host = rs.getString(2);
        int port = rs.getInt(3);
        // a null address with a port of -1 is a Unix-socket client; null and null: not visible to this user
        String address = host != null ? host + (port > 0 ? ":" + port : "") : port == -1 ? "local socket" : null;
        return Optional.of(new Session(rs.getLong(1), address, rs.getString(4), rs.getString(5), instant(rs, 6),
            instant(rs, 7)));
      }
    }
  }

  /**
   * MariaDB, H2: the session holding the row lock, learnt by queueing for it on {@code c} for at most
   * {@link #QUEUE_MILLIS} while another connection reads whom {@code c} waits for; the queued probe is cut
   * short once that is known (or ends at its timeout, or takes the row if the holder let go meanwhile, and
   * is rolled back). Empty if the holder cannot be read (missing privilege, or it let go).
   */
  private static Optional<Session> queueBehind(JdbcLockClient client, Connection c, String namespace, String name)
      throws SQLException {
    Db db = client.db();
    boolean maria = client.dialect() == JdbcDialect.MARIADB;
    long me;
    try (PreparedStatement ps = db.prepare(c, maria ? "SELECT CONNECTION_ID()" : "SELECT SESSION_ID()");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      me = rs.getLong(1);
    }
    String blocker = maria
        ? "SELECT b.trx_mysql_thread_id, p.HOST, NULL, p.USER, NULL, UNIX_TIMESTAMP(b.trx_started)"
            + " FROM information_schema.INNODB_LOCK_WAITS x"
            + " JOIN information_schema.INNODB_TRX r ON r.trx_id = x.requesting_trx_id"
            + " JOIN information_schema.INNODB_TRX b ON b.trx_id = x.blocking_trx_id"
            + " LEFT JOIN information_schema.PROCESSLIST p ON p.ID = b.trx_mysql_thread_id"
            + " WHERE r.trx_mysql_thread_id = ?"
        : "SELECT s.SESSION_ID, s.CLIENT_ADDR, s.CLIENT_INFO, s.USER_NAME, s.SESSION_START, NULL"
            + " FROM INFORMATION_SCHEMA.SESSIONS w JOIN INFORMATION_SCHEMA.SESSIONS s ON s.SESSION_ID = w.BLOCKER_ID"
            + " WHERE w.SESSION_ID = ?";
    long until = System.nanoTime() + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(maria ? QUEUE_MILLIS
        : H2_QUEUE_MILLIS);
    java.util.concurrent.CompletableFuture<Optional<Session>> watcher = db.call("find the holder of '" + name + "'",
        w -> {
          while (true) {
            try (PreparedStatement ps = db.prepare(w, blocker)) {
              ps.setLong(1, me);
              try (ResultSet rs = ps.executeQuery()) {
                if (rs.next()) {
                  Session s = new Session(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(4),
                      maria ? null : instant(rs, 5), maria ? epochSeconds(rs, 6) : null);
                  cancel(db, w, maria, me);
                  return Optional.of(s);
                }
              }
            } catch (SQLException e) {
              // e.g. no PROCESS privilege: the probe waits out its timeout (it may not have started yet, and a
              // cancel that came before it could not stop it)
              return Optional.<Session>empty();
            }
            if (System.nanoTime() - until > 0) {
              cancel(db, w, maria, me);
              return Optional.<Session>empty();
            }
            // polling the server's view of another connection: nothing here could notify us instead
            java.util.concurrent.locks.LockSupport.parkNanos(java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(20));
          }
        }, null);
    c.setAutoCommit(false);
    try (PreparedStatement ps = db.prepare(c, "SELECT 1 FROM " + client.table()
        + " WHERE namespace = ? AND kind = 'R' AND lock_name = ? FOR UPDATE WAIT " + queueWaitSeconds(client.dialect()))) {
      ps.setString(1, namespace);
      ps.setString(2, name);
      ps.executeQuery().close();
    } catch (SQLException expected) {
      // the wait timed out, or the watcher cut it short
    } finally {
      try {
        c.rollback();
        c.setAutoCommit(true);
      } catch (SQLException cutShort) {
        // the watcher's cancel can land on the rollback itself; the pool's next use rolls back anyway, and
        // failing here would turn a found holder into a failed command
      }
    }
    return Futures.join(watcher);
  }

  /** Ends the queued probe's wait: the holder is known. Best effort (it ends at its timeout anyway). */
  private static void cancel(Db db, Connection w, boolean maria, long me) {
    try (PreparedStatement ps = db.prepare(w, maria ? "KILL QUERY " + me : "CALL CANCEL_SESSION(" + me + ")")) {
      ps.execute();
    } catch (SQLException ignored) {
      // not allowed: the probe waits out its timeout
    }
  }

  private static Instant epochSeconds(ResultSet rs, int column) throws SQLException {
    long t = rs.getLong(column);
    return rs.wasNull() ? null : Instant.ofEpochSecond(t);
  }

  private static Instant instant(ResultSet rs, int column) throws SQLException {
    OffsetDateTime t = rs.getObject(column, OffsetDateTime.class);
    return t == null ? null : t.toInstant();
  }

  /**
   * Whether another session holds the row lock: the row is locked without waiting and the lock given
   * back at once (no row at all: nobody has taken that name in this mode since the rows were purged).
   */
  private static boolean rowHeld(Db db, Connection c, String table, String namespace, String name)
      throws SQLException {
    c.setAutoCommit(false);
    try (PreparedStatement ps = db.prepare(c, "SELECT 1 FROM " + table
        + " WHERE namespace = ? AND kind = 'R' AND lock_name = ? FOR UPDATE NOWAIT")) {
      ps.setString(1, namespace);
      ps.setString(2, name);
      try (ResultSet rs = ps.executeQuery()) {
        return false;
      }
    } catch (SQLException e) {
      if (PinnedBackend.isLockNotAvailable(e)) {
        return true;
      }
      throw e;
    } finally {
      c.rollback();
      c.setAutoCommit(true);
    }
  }
}
