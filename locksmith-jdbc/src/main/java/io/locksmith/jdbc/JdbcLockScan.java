package io.locksmith.jdbc;

import io.locksmith.LockKind;
import io.locksmith.LockScan.End;
import io.locksmith.LockScan.Found;
import io.locksmith.LockScan.Result;
import io.locksmith.internal.Futures;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Set;

/**
 * For operators: which lease-mode locks, fair locks, read-write locks and semaphores of a {@link
 * JdbcLockClient}'s namespace are held (or waited for), read from the lock tables in one short read-only
 * call: the held exclusive and fair locks (an owner and a lease unexpired by the database clock), the
 * read-write locks with a live writer, reader or waiter registration, the semaphores with a live permit,
 * the fair locks with a live place in their queue, and on PostgreSQL every lock with a live waiter
 * registration. What {@code locksmith list
 * --jdbc-url} prints. Applications know their lock names and do not need a walk.
 *
 * <p>Stateless and thread-safe. The call runs on the client's workers within its command timeout, like
 * every other call of the client.
 */
public final class JdbcLockScan {
  private JdbcLockScan() {}

  /**
   * @param client a lease-mode client ({@link JdbcLockMode#LEASE}) of the namespace and table to read
   * @param limit the most locks to report, at least 1
   * @return the locks found, ordered by kind and name, with {@link End#LIMIT_REACHED} if there were more
   *     and {@link Result#traces()} the number of the namespace's rows in the lock table (held or free: 0
   *     tells a mistyped namespace or table from an idle one)
   * @throws NullPointerException if {@code client} is null
   * @throws IllegalArgumentException if {@code limit} is below 1, or the client holds its locks on pinned
   *     connections (row-lock and advisory modes keep no owner in the table)
   * @throws io.locksmith.BackendUnavailableException if the database does not answer within the command
   *     timeout
   * @throws io.locksmith.LockException if the database refuses the query (e.g. missing privileges)
   */
  public static Result locks(JdbcLockClient client, int limit) {
    Objects.requireNonNull(client, "client");
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be at least 1, was " + limit);
    }
    JdbcBackend backend = client.backend();
    if (backend == null) {
      throw new IllegalArgumentException("only lease-mode locks are listed; this client's mode is " + client.mode());
    }
    String namespace = client.options().namespace();
    Sql sql = backend.sql;
    Result found = Futures.join(backend.db.call("list the namespace's locks", c -> {
      Set<Found> locks = new LinkedHashSet<>();
      FairSql fair = backend.fair.statements();
      ReadWriteSql rw = backend.readWrite().sql;
      boolean more = collect(backend.db, c, sql.listLocks, namespace, LockKind.EXCLUSIVE, limit, locks)
          || collect(backend.db, c, fair.listHeld, namespace, LockKind.FAIR, limit, locks)
          || collect(backend.db, c, rw.listWriters, namespace, LockKind.READ_WRITE, limit, locks)
          || collect(backend.db, c, rw.listReaders, namespace, LockKind.READ_WRITE, limit, locks)
          || collect(backend.db, c, rw.listWaiting, namespace, LockKind.READ_WRITE, limit, locks)
          || collect(backend.db, c, sql.listSemaphores, namespace, LockKind.SEMAPHORE, limit, locks);
      if (!more && sql.listWaited == null) { // MariaDB, H2: the fair lock's queue is their only waiters' table
        more = collect(backend.db, c, fair.listQueued, namespace, LockKind.FAIR, limit, locks);
      }
      if (!more && sql.listWaited != null) {
        try (PreparedStatement ps = backend.db.prepare(c, sql.listWaited)) {
          ps.setString(1, namespace);
          try (ResultSet rs = ps.executeQuery()) {
            while (rs.next() && !more) {
              String k = rs.getString(1);
              LockKind kind = "S".equals(k) ? LockKind.SEMAPHORE : "F".equals(k) ? LockKind.FAIR : LockKind.EXCLUSIVE;
              locks.add(new Found(kind, rs.getString(2)));
              more = locks.size() > limit;
            }
          }
        }
      }
      Set<Found> kept = new LinkedHashSet<>();
      locks.stream().limit(limit).forEach(kept::add);
      return Result.sorted(kept, 0, more ? End.LIMIT_REACHED : End.FINISHED);
    }, null));
    return new Result(found.locks(), client.namespaceRows(), found.end());
  }

  /** @return true if more than {@code limit} locks are known now */
  private static boolean collect(Db db, Connection c, String query, String namespace, LockKind kind, int limit,
      Set<Found> into) throws SQLException {
    try (PreparedStatement ps = db.prepare(c, query)) {
      ps.setString(1, namespace);
      ps.setMaxRows(limit + 1);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          into.add(new Found(kind, rs.getString(1)));
          if (into.size() > limit) {
            return true;
          }
        }
      }
    }
    return false;
  }
}
