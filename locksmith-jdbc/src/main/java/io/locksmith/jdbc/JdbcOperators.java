package io.locksmith.jdbc;

import static io.locksmith.jdbc.JdbcBackend.EVICTED;
import static io.locksmith.jdbc.JdbcBackend.LOCK;
import static io.locksmith.jdbc.JdbcBackend.holdKind;

import io.locksmith.LockInfo;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The operators' functions of a {@link JdbcBackend}: the exclusive lock's inspect and force-unlock (the
 * backend's {@code LockOps} methods delegate here), the waiter count and the eviction notices that the
 * other kinds' inspects and force-unlocks use too, and the purge of expired rows of every kind ({@link
 * JdbcLockClient#purgeExpired}).
 *
 * <p>Holds no state of its own (it reads its backend's); thread-safe. {@link #inspect}, {@link
 * #forceUnlock} and {@link #purgeExpired} hand their work to the backend's workers ({@link Db}) and return
 * at once; {@link #countWaiters} and {@link #tellEvicted} run on the connection of the caller's call.
 */
final class JdbcOperators {
  private static final Logger log = LoggerFactory.getLogger(JdbcOperators.class);

  private final JdbcBackend backend;
  private final Sql sql;
  private final Db db;

  JdbcOperators(JdbcBackend backend) {
    this.backend = backend;
    this.sql = backend.sql;
    this.db = backend.db;
  }

  CompletionStage<Optional<LockInfo>> inspect(String name) {
    return db.call("inspect '" + name + "'", c -> {
      try (PreparedStatement ps = db.prepare(c, sql.inspect)) {
        backend.bindKey(ps, 1, LOCK, name);
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next()) {
            return Optional.<LockInfo>empty();
          }
          return Optional.of(new LockInfo(name, rs.getString(1), rs.getInt(2), rs.getLong(3),
              Duration.ofMillis(Math.max(0, rs.getLong(4))), countWaiters(c, LOCK, name)));
        }
      }
    }, null);
  }

  /**
   * Frees the lock row of {@code kind} and {@code name} whoever holds it, in one transaction that locks the
   * row first (the exclusive and the fair lock share the row's layout).
   *
   * @return the evicted owner, or null if nobody held it
   */
  String evictHolder(Connection c, char kind, String name) throws SQLException {
    return Db.inTransaction(c, () -> {
      String owner;
      try (PreparedStatement ps = db.prepare(c, sql.holderForUpdate)) {
        backend.bindKey(ps, 1, kind, name);
        try (ResultSet rs = ps.executeQuery()) {
          owner = rs.next() ? rs.getString(1) : null;
        }
      }
      if (owner != null) {
        try (PreparedStatement ps = db.prepare(c, sql.forceUnlock)) {
          backend.bindKey(ps, 1, kind, name);
          ps.setString(4, owner);
          ps.executeUpdate();
        }
      }
      c.commit();
      return owner;
    });
  }

  int countWaiters(Connection c, char kind, String name) throws SQLException {
    if (!backend.notifies()) {
      return 0;
    }
    try (PreparedStatement ps = db.prepare(c, sql.waitersCount)) {
      backend.bindKey(ps, 1, kind, name);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getInt(1) : 0;
      }
    }
  }

  /**
   * Frees the lock whoever holds it, tells the evicted holder (this client directly; on PostgreSQL
   * another client through its channel; on MariaDB and H2 another client finds out at its next renewal)
   * and wakes one waiter.
   */
  CompletionStage<Boolean> forceUnlock(String name) {
    return db.call("force-unlock '" + name + "'", c -> {
      String evicted = evictHolder(c, LOCK, name);
      if (evicted == null) {
        return false;
      }
      tellEvicted(c, LOCK, name, List.of(evicted));
      backend.wakeNext(c, LOCK, name, 1);
      return true;
    }, null);
  }

  /** Eviction notices: to this client's events, or through the owners' clients' channels. */
  void tellEvicted(Connection c, char kind, String name, List<String> owners) {
    for (String owner : owners) {
      int colon = owner.indexOf(':');
      String ownerClient = colon > 0 ? owner.substring(0, colon) : owner;
      if (ownerClient.equals(backend.clientId)) {
        backend.events.ownerEvicted(holdKind(kind), name, owner, "force-unlocked by an operator");
      } else if (backend.notifies()) {
        try (PreparedStatement ps = db.prepare(c, "SELECT pg_notify(?, ?)")) {
          ps.setString(1, "locksmith_" + ownerClient);
          ps.setString(2, EVICTED + "\n" + kind + "\n" + owner + "\n" + name);
          ps.executeQuery().close();
        } catch (SQLException e) {
          log.debug("could not tell {} of its eviction from '{}': {}", owner, name, e.toString());
        }
      }
    }
  }

  /**
   * Deletes rows whose last lease ended more than {@code grace} ago (fair locks' only when nobody queues
   * for them), expired permits, read-write lock readers and waiters whose lease or registration ended, the
   * meta rows of semaphores without permits (unless their count was set by {@code setPermits}) and dead
   * waiters' registrations and fair queue places of this client's namespace. Hygiene only: expired rows
   * are taken over anyway.
   */
  CompletableFuture<Integer> purgeExpired(Duration grace) {
    return db.call("purge expired rows", c -> {
      // each DELETE commits on its own under READ COMMITTED, as the lock operations run: MariaDB's default
      // REPEATABLE READ would take gap locks over the namespace's ranges and deadlock with them
      int isolation = c.getTransactionIsolation();
      if (isolation != Connection.TRANSACTION_READ_COMMITTED) {
        c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
      }
      try {
        return purge(c, grace);
      } finally {
        if (isolation != Connection.TRANSACTION_READ_COMMITTED) {
          c.setTransactionIsolation(isolation);
        }
      }
    }, null);
  }

  private int purge(Connection c, Duration grace) throws SQLException {
    {
      int n = 0;
      try (PreparedStatement ps = db.prepare(c, sql.purgeLocks)) {
        ps.setString(1, backend.namespace);
        ps.setLong(2, grace.toMillis());
        n += ps.executeUpdate();
      }
      try (PreparedStatement ps = db.prepare(c, sql.purgePermits)) {
        ps.setString(1, backend.namespace);
        ps.setLong(2, 0);
        n += ps.executeUpdate();
      }
      try (PreparedStatement ps = db.prepare(c, sql.purgeSemaphores)) {
        ps.setString(1, backend.namespace);
        n += ps.executeUpdate();
      }
      try (PreparedStatement ps = db.prepare(c, backend.readWrite().sql.purge)) {
        ps.setString(1, backend.namespace);
        // the grace, as for the lock rows: a read-write transaction judges its members by the clock it read
        // at its start (H2's is frozen for the transaction), so a row it saw live must outlive that moment
        ps.setLong(2, grace.toMillis());
        n += ps.executeUpdate();
      }
      if (backend.notifies()) {
        try (PreparedStatement ps = db.prepare(c, sql.purgeWaiters)) {
          ps.setString(1, backend.namespace);
          n += ps.executeUpdate();
        }
      }
      n += backend.fair.purge(c, grace);
      return n;
    }
  }
}
