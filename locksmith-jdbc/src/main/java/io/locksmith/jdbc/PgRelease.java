package io.locksmith.jdbc;

import static io.locksmith.jdbc.JdbcBackend.LOCK;

import io.locksmith.spi.AcquireReply;
import io.locksmith.spi.HandOffReply;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * PostgreSQL: the statements of the exclusive lock's releases, which wake its waiters through their
 * clients' channels: the release with its wake-up in one round trip (a name seen contended lately), the
 * release that reads the waiter mark first (any other name), and the local hand-off ({@link
 * io.locksmith.spi.HandOffOps}, which {@link JdbcBackend} implements by delegating here): the release
 * that grants the lock to a waiting owner of this client, the release that ends a run of hand-offs by
 * waking a waiter of another client, and, while this client leaves the name to that waiter, the acquire
 * that only registers. {@link JdbcBackend} picks which release runs; the runs and reservations are
 * counted by {@link LocalHandOff} (the backend's {@code handOffs}).
 *
 * <p>Holds no state of its own (it reads and updates its backend's); thread-safe. The statements run on
 * the connection of one of the backend's calls ({@link Db}); {@link #releaseAndHandOff} makes its own call.
 */
final class PgRelease {
  private static final Logger log = LoggerFactory.getLogger(PgRelease.class);

  private final JdbcBackend backend;
  private final Sql sql;
  private final Db db;

  PgRelease(JdbcBackend backend) {
    this.backend = backend;
    this.sql = backend.sql;
    this.db = backend.db;
  }

  // ------------------------------------------------------------------ plain releases

  /** PostgreSQL: the release and the wake-up in one round trip ({@link Sql#releaseAndWake}). */
  int releaseAndWake(Connection c, String name, String owner, boolean all) throws SQLException {
    int threshold = all ? Integer.MAX_VALUE : 1;
    try (PreparedStatement ps = db.prepare(c, sql.releaseAndWake)) {
      ps.setInt(1, threshold);
      ps.setInt(2, threshold);
      ps.setInt(3, threshold);
      int i = backend.bindKey(ps, 4, LOCK, name);
      ps.setString(i++, owner);
      i = backend.bindKey(ps, i, LOCK, name); // the wake's waiters
      i = backend.bindKey(ps, i, LOCK, name); // ... only if the lock row is free now
      ps.setInt(i++, 1);
      i = backend.bindKey(ps, i, LOCK, name);
      ps.setString(i++, String.valueOf(LOCK));
      ps.setString(i, name);
      boolean rows = ps.execute();
      int left = -1;
      if (rows) {
        try (ResultSet rs = ps.getResultSet()) {
          if (rs.next()) {
            left = rs.getInt(1);
          }
        }
      }
      while (ps.getMoreResults() || ps.getUpdateCount() != -1) {
        // drain the wake's result: one row per notified waiter
      }
      return left;
    }
  }

  /**
   * PostgreSQL, a name not seen contended lately: the release alone, which also reads the lock row's
   * waiter mark ({@link Sql#MARK}); only a marked row (or a release that found the lease gone) is
   * followed by the wake-up ({@link Sql#wakeIfFree}), in a round trip of its own after the release
   * committed.
   */
  int releaseMarked(Connection c, String name, String owner, boolean all) throws SQLException {
    int threshold = all ? Integer.MAX_VALUE : 1;
    int left = -1;
    boolean marked = false;
    try (PreparedStatement ps = db.prepare(c, sql.releaseMarked)) {
      ps.setInt(1, threshold);
      ps.setInt(2, threshold);
      ps.setInt(3, threshold);
      backend.bindKey(ps, 4, LOCK, name);
      ps.setString(7, owner);
      try (ResultSet rs = ps.executeQuery()) {
        if (rs.next()) {
          left = rs.getInt(1);
          rs.getInt(2);
          marked = !rs.wasNull();
        }
      }
    }
    if (left > 0 || (left == 0 && !marked)) {
      return left; // still held, or free with no waiter registered before this release
    }
    if (marked) {
      backend.contention.saw(name);
    }
    // marked, or the release found no lease of ours (expired): wake as releaseAndWake would
    wakeIfFree(c, name);
    return left;
  }

  /** PostgreSQL: wakes the oldest registered waiter of {@code name} if the lock is free now; best effort. */
  private void wakeIfFree(Connection c, String name) {
    try (PreparedStatement ps = db.prepare(c, sql.wakeIfFree)) {
      int i = backend.bindKey(ps, 1, LOCK, name); // its waiters
      i = backend.bindKey(ps, i, LOCK, name); // ... if the lock row is free now
      ps.setInt(i++, 1);
      i = backend.bindKey(ps, i, LOCK, name);
      ps.setString(i++, String.valueOf(LOCK));
      ps.setString(i, name);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          // one row per notified waiter
        }
      }
    } catch (SQLException e) {
      // the release itself committed; a waiter that was not woken re-checks at its backstop
      log.debug("could not wake a waiter of '{}': {}", name, e.toString());
    }
  }

  // ------------------------------------------------------------------ local hand-off

  /**
   * One statement drops the releaser's holds and grants the lock to {@code nextOwner} ({@link
   * Sql#handOff}), unless the run of hand-offs on the name reached {@link LocalHandOff#COHORT}: then a
   * plain release that wakes another client's waiter ({@link Sql#releaseAndWakeOther}). A hand-off's
   * grant is an attempt of {@code nextOwner} for {@link LateGrants}: one whose reply comes after the call
   * timed out is given back unless a later attempt of that owner holds it.
   */
  CompletionStage<HandOffReply> releaseAndHandOff(String name, String owner, String nextOwner,
      long nextLeaseMillis, String nextWaiterId) {
    CompletableFuture<Void> over = backend.lateGrants.releasing(LateGrants.key(LOCK, name, owner));
    if (backend.handOffs.cohortDone(name)) {
      backend.handOffs.runEnded(name);
      return db.call("release '" + name + "'", (Db.Work<Integer>) c -> endRun(c, name, owner), null,
          (left, answered) -> over.complete(null)).thenApply(left -> new HandOffReply(left >= 0, null));
    }
    LateGrants.Attempt attempt = backend.lateGrants.begin(LateGrants.key(LOCK, name, nextOwner));
    return db.call("release '" + name + "' to a waiter", c -> handOff(c, name, owner, nextOwner, nextLeaseMillis,
        nextWaiterId), attempt.gate(), (Long token, boolean answered) -> {
          over.complete(null);
          backend.lateGrants.settled(attempt, token != null && token > 0, answered,
              () -> backend.giveBack(name, nextOwner));
        }).thenApply(token -> token > 0 ? new HandOffReply(true, AcquireReply.granted(token, 1))
            : new HandOffReply(false, null));
  }

  /** @return the next owner's token, or -1 if the releaser held no unexpired lease (nothing changed) */
  private long handOff(Connection c, String name, String owner, String nextOwner, long nextLeaseMillis,
      String nextWaiterId) throws SQLException {
    backend.contention.saw(name);
    try (PreparedStatement ps = db.prepare(c, sql.handOff)) {
      ps.setString(1, nextOwner);
      ps.setLong(2, nextLeaseMillis);
      int i = backend.bindKey(ps, 3, LOCK, name);
      ps.setString(i++, owner);
      i = backend.bindKey(ps, i, LOCK, name);
      ps.setString(i, nextWaiterId);
      try (ResultSet rs = ps.executeQuery()) {
        if (rs.next()) {
          backend.local.remove(nextWaiterId);
          backend.handOffs.handedOff(name);
          return rs.getLong(1);
        }
      }
    }
    // the releaser's lease had ended: as a release that found none, wake a registered waiter if it is free
    wakeIfFree(c, name);
    return -1;
  }

  /**
   * The release that ends a run of hand-offs: every hold, then the oldest registered waiter of another
   * client is woken if the lock is free; if one was, this client leaves it the lock for a while.
   */
  private int endRun(Connection c, String name, String owner) throws SQLException {
    int left = -1;
    int woken = 0;
    try (PreparedStatement ps = db.prepare(c, sql.releaseAndWakeOther)) {
      ps.setInt(1, Integer.MAX_VALUE);
      ps.setInt(2, Integer.MAX_VALUE);
      ps.setInt(3, Integer.MAX_VALUE);
      int i = backend.bindKey(ps, 4, LOCK, name);
      ps.setString(i++, owner);
      i = backend.bindKey(ps, i, LOCK, name); // the wake's waiters
      i = backend.bindKey(ps, i, LOCK, name); // ... only if the lock row is free now
      ps.setString(i++, backend.channel); // ... and of another client
      ps.setInt(i++, 1);
      i = backend.bindKey(ps, i, LOCK, name);
      ps.setString(i++, String.valueOf(LOCK));
      ps.setString(i, name);
      boolean rows = ps.execute();
      if (rows) {
        try (ResultSet rs = ps.getResultSet()) {
          if (rs.next()) {
            left = rs.getInt(1);
          }
        }
      }
      while (true) {
        if (ps.getMoreResults()) {
          try (ResultSet rs = ps.getResultSet()) {
            while (rs.next()) {
              woken++;
            }
          }
        } else if (ps.getUpdateCount() == -1) {
          break;
        }
      }
    }
    if (woken > 0) {
      backend.handOffs.reserve(name);
    }
    return left;
  }

  /**
   * PostgreSQL, while this client leaves {@code name} to another client's waiter ({@link LocalHandOff}):
   * registers the waiter, so that a release wakes it, and refuses it until the reservation ends.
   */
  AcquireReply registerOnly(Connection c, String name, String waiterId, long reservedMillis)
      throws SQLException {
    try (PreparedStatement ps = db.prepare(c, sql.waiterRegister)) {
      int i = backend.bindKey(ps, 1, LOCK, name);
      ps.setString(i++, waiterId);
      ps.setString(i++, backend.channel);
      ps.setLong(i, backend.waiterTtlMillis());
      ps.executeUpdate();
    }
    backend.local.refused(LOCK, name, waiterId);
    return AcquireReply.busy(reservedMillis + 1);
  }
}
