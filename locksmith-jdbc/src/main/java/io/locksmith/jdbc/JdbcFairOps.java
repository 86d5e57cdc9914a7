package io.locksmith.jdbc;

import static io.locksmith.jdbc.JdbcBackend.FAIR;

import io.locksmith.LockInfo;
import io.locksmith.spi.AcquireMode;
import io.locksmith.spi.AcquireReply;
import io.locksmith.spi.LockOps;
import io.locksmith.spi.RenewRequest;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The fair lock in lease mode: granted in order of arrival by the database's clock.
 *
 * <p>The lock is a row of the lock table of kind {@code F} (owner, hold count, token, expiry by the
 * database clock, exactly like the exclusive lock's row, which it never meets: the kind is part of the
 * key). Its queue is the rows of kind {@code F} of the waiters table: one per waiting acquisition, with
 * its place ({@code since}) and when that place expires. Every attempt is one short READ COMMITTED
 * transaction that first locks the lock row ({@code SELECT … FOR UPDATE}, creating the row the first
 * time), so attempts, and the places they take, are serialized per name:
 *
 * <ul>
 *   <li>the owner's own unexpired hold is granted again (the leftover of an earlier attempt of the same
 *       acquisition: hold count 1, its token);
 *   <li>else expired places are dropped (by the database's time read once with the row lock, which also
 *       judges the head and the keeping of a place: a place expiring during the attempt is kept, not
 *       dropped by none and inserted again), and the lock is granted only if it is free (no owner, or its
 *       lease ran out by the database clock) and the caller is the head of the queue or the queue is
 *       empty: a caller that does not wait never overtakes a queued waiter;
 *   <li>else a waiting caller keeps its place (its expiry pushed back) or takes a new one at the back:
 *       {@code since} = the database's now, but at least one above the latest place of the name, so
 *       places are strictly ordered even within a millisecond or across a step back of the clock.
 * </ul>
 *
 * <p>A waiter's place expires {@link #placeTimeout} after its last attempt; every refusal's retry hint
 * is at most a third of that, so a live waiter keeps its place, and one that died or gave up without
 * saying so holds the queue up for at most that long (the waiter behind it re-checks when the place
 * expires). A grant draws its token from the same sequence as the exclusive lock, under the row's lock,
 * and never at or below the row's last token. A release (and a force-unlock, and a head that gives up
 * while the lock is free) wakes the head only: a waiter of this client directly; on PostgreSQL one of
 * another client by {@code NOTIFY} on that client's channel; on MariaDB and H2 other clients' waiters
 * poll with the client's backoff.
 *
 * <p>Thread-safe: every method hands its work to the backend's workers and returns at once.
 */
final class JdbcFairOps implements LockOps {
  private static final Logger log = LoggerFactory.getLogger(JdbcFairOps.class);
  /** Default time a waiter's place outlives its last attempt. */
  static final Duration DEFAULT_PLACE_TIMEOUT = Duration.ofSeconds(5);

  private final JdbcBackend backend;
  private final Sql sql;
  private final FairSql fair;
  private final Db db;
  private volatile long placeMillis = DEFAULT_PLACE_TIMEOUT.toMillis();

  JdbcFairOps(JdbcBackend backend) {
    this.backend = backend;
    this.sql = backend.sql;
    this.fair = new FairSql(backend.sql);
    this.db = backend.db;
  }

  /** Sets how long a waiter's place outlives its last attempt; before the client is used. */
  void placeTimeout(Duration timeout) {
    this.placeMillis = timeout.toMillis();
  }

  FairSql statements() {
    return fair;
  }

  // ------------------------------------------------------------------ acquire

  @Override
  public CompletionStage<AcquireReply> acquire(String name, String owner, long leaseMillis, AcquireMode mode,
      String waiterId) {
    if (mode == AcquireMode.REENTER) {
      return db.call("re-enter fair lock '" + name + "'", c -> backend.reenter(c, FAIR, name, owner, leaseMillis),
          null);
    }
    LateGrants.Attempt attempt = backend.lateGrants.begin(LateGrants.key(FAIR, name, owner));
    return Db.conflictAsRefusal(db.call("acquire fair lock '" + name + "'", c -> Db.inTransaction(c,
        () -> attempt(c, name, owner, leaseMillis, waiterId)), attempt.gate(),
        (reply, answered) -> backend.lateGrants.settled(attempt, reply != null && reply.granted(), answered,
            () -> giveBack(name, owner))), AcquireReply.busy(backend.pollMillis(0, -1)));
  }

  /** Gives back a grant whose reply came after its call timed out, when no later attempt holds it. */
  private CompletionStage<?> giveBack(String name, String owner) {
    CompletableFuture<Void> over = new CompletableFuture<>();
    db.call("give back fair lock '" + name + "'", releaseWork(name, owner, true), null,
        (left, answered) -> over.complete(null));
    return over;
  }

  /** The lock row as locked by this transaction, with the database's now of that read. */
  private record Row(String owner, long token, long remaining, long now) {
    boolean free() {
      return owner == null || remaining <= 0;
    }
  }

  /** The head of the queue: its waiter, its client's channel, how long its place has left. */
  private record Head(String waiterId, String channel, long placeLeft) {}

  private AcquireReply attempt(Connection c, String name, String owner, long leaseMillis, String waiterId)
      throws SQLException {
    Row row = lockRow(c, name);
    if (owner.equals(row.owner) && row.remaining > 0) {
      // this owner's leftover of an earlier attempt of the same acquisition: hold count 1, its token
      setHolder(c, name, owner, row.token, leaseMillis);
      leave(c, name, waiterId);
      c.commit();
      backend.local.remove(waiterId);
      return AcquireReply.granted(row.token, 1);
    }
    // one reading of the clock for the drop, the head and the refresh: a place that expired after it is
    // kept by all three (refreshed), not dropped by none and inserted again (a duplicate key)
    try (PreparedStatement ps = db.prepare(c, fair.dropExpired)) {
      int i = backend.bindKey(ps, 1, FAIR, name);
      ps.setLong(i, row.now);
      ps.executeUpdate();
    }
    Head head = head(c, name, row.now);
    if (row.free() && (head == null || head.waiterId.equals(waiterId))) {
      long token;
      try (PreparedStatement ps = db.prepare(c, sql.nextToken); ResultSet rs = ps.executeQuery()) {
        rs.next();
        token = Math.max(rs.getLong(1), row.token + 1); // never at or below the row's: a sequence set back
      }
      setHolder(c, name, owner, token, leaseMillis);
      if (head != null) {
        leave(c, name, waiterId);
      }
      c.commit();
      backend.local.remove(waiterId);
      return AcquireReply.granted(token, 1);
    }
    if (waiterId == null) {
      return AcquireReply.busy(0);
    }
    boolean first = head == null;
    if (!refresh(c, name, waiterId, row.now)) {
      enqueue(c, name, waiterId);
    }
    c.commit();
    int attempts = backend.local.refused(FAIR, name, waiterId);
    first |= head != null && head.waiterId.equals(waiterId);
    // a live waiter asks again well before its place expires
    long cap = Math.max(1, placeMillis / 3);
    if (backend.notifies()) {
      // woken when the lock is freed while first in line; else re-check when the holder's lease runs out
      // (first) or when the head's place would expire if the head died (behind it)
      long until = first ? (row.free() ? 0 : row.remaining) : head.placeLeft;
      return AcquireReply.busy(Math.min(cap, backend.recheckMillis(until)));
    }
    return AcquireReply.busy(Math.min(cap, backend.pollMillis(attempts, row.free() ? -1 : row.remaining)));
  }

  /** Locks the lock row, creating it (free) first if there is none. */
  private Row lockRow(Connection c, String name) throws SQLException {
    Row row = selectForUpdate(c, name);
    if (row == null) {
      try (PreparedStatement ps = db.prepare(c, sql.metaEnsure)) {
        backend.bindKey(ps, 1, FAIR, name);
        ps.setNull(4, Types.INTEGER);
        ps.executeUpdate();
      }
      row = selectForUpdate(c, name);
      if (row == null) {
        throw new Db.Retry("the fair lock's row of '" + name + "' vanished");
      }
    }
    return row;
  }

  private Row selectForUpdate(Connection c, String name) throws SQLException {
    try (PreparedStatement ps = db.prepare(c, fair.lockRow)) {
      backend.bindKey(ps, 1, FAIR, name);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return null;
        }
        long now = rs.getLong(5);
        // a new row has no lease end: read as 0, it is free
        return new Row(rs.getString(1), rs.getLong(3), rs.getLong(4) - now, now);
      }
    }
  }

  private void setHolder(Connection c, String name, String owner, long token, long leaseMillis) throws SQLException {
    try (PreparedStatement ps = db.prepare(c, fair.setHolder)) {
      ps.setString(1, owner);
      ps.setLong(2, token);
      ps.setLong(3, leaseMillis);
      backend.bindKey(ps, 4, FAIR, name);
      ps.executeUpdate();
    }
  }

  /** The head of the queue at {@code now}, read with the lock row. */
  private Head head(Connection c, String name, long now) throws SQLException {
    try (PreparedStatement ps = db.prepare(c, fair.head)) {
      int i = backend.bindKey(ps, 1, FAIR, name);
      ps.setLong(i, now);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? new Head(rs.getString(1), rs.getString(2), rs.getLong(3) - now) : null;
      }
    }
  }

  /** The head of the queue by the database clock now (its place's time left is not read). */
  private Head headNow(Connection c, String name) throws SQLException {
    try (PreparedStatement ps = db.prepare(c, fair.headNow)) {
      backend.bindKey(ps, 1, FAIR, name);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? new Head(rs.getString(1), rs.getString(2), 0) : null;
      }
    }
  }

  /** @return whether the waiter had a place live at {@code now}, now pushed back */
  private boolean refresh(Connection c, String name, String waiterId, long now) throws SQLException {
    try (PreparedStatement ps = db.prepare(c, fair.refresh)) {
      ps.setLong(1, placeMillis);
      int i = backend.bindKey(ps, 2, FAIR, name);
      ps.setString(i++, waiterId);
      ps.setLong(i, now);
      return ps.executeUpdate() > 0;
    }
  }

  /** A place at the back of the queue: after every place of the name, by the database clock. */
  private void enqueue(Connection c, String name, String waiterId) throws SQLException {
    long since;
    try (PreparedStatement ps = db.prepare(c, fair.tail)) {
      backend.bindKey(ps, 1, FAIR, name);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        long latest = rs.getLong(1);
        boolean none = rs.wasNull();
        long now = rs.getLong(2);
        since = none ? now : Math.max(now, latest + 1);
      }
    }
    try (PreparedStatement ps = db.prepare(c, fair.enqueue)) {
      int i = backend.bindKey(ps, 1, FAIR, name);
      ps.setString(i++, waiterId);
      ps.setString(i++, backend.channel);
      ps.setLong(i++, since);
      ps.setLong(i, placeMillis);
      ps.executeUpdate();
    }
  }

  /** @return whether a place was removed */
  private boolean leave(Connection c, String name, String waiterId) throws SQLException {
    if (waiterId == null) {
      return false;
    }
    try (PreparedStatement ps = db.prepare(c, fair.leave)) {
      int i = backend.bindKey(ps, 1, FAIR, name);
      ps.setString(i, waiterId);
      return ps.executeUpdate() > 0;
    }
  }

  // ------------------------------------------------------------------ release, renew

  /** The owner's release; its next attempts wait for the release's work to be over ({@link LateGrants}). */
  @Override
  public CompletionStage<Integer> release(String name, String owner, boolean all) {
    CompletableFuture<Void> over = backend.lateGrants.releasing(LateGrants.key(FAIR, name, owner));
    return db.call("release fair lock '" + name + "'", releaseWork(name, owner, all), null,
        (left, answered) -> over.complete(null));
  }

  private Db.Work<Integer> releaseWork(String name, String owner, boolean all) {
    return c -> {
      int left = backend.releaseRow(c, FAIR, name, owner, all);
      if (left == 0) {
        wakeHead(c, name);
      }
      return left;
    };
  }

  @Override
  public CompletionStage<List<Boolean>> renew(List<RenewRequest> requests) {
    return db.call("renew " + requests.size() + " fair lease(s)", c -> backend.renewRows(c, sql.renew, requests, FAIR),
        null);
  }

  // ------------------------------------------------------------------ wake-ups

  /**
   * Wakes the head of the queue, and only the head: this client's waiter directly, another client's on
   * PostgreSQL through its channel (on MariaDB and H2 it polls). Best effort: a failure costs the head
   * one re-check interval, never a wrong grant.
   */
  private void wakeHead(Connection c, String name) {
    try {
      Head head = headNow(c, name);
      if (head == null) {
        return;
      }
      if (head.channel.equals(backend.channel)) {
        backend.local.remove(head.waiterId);
        if (!backend.sink().wake(name, head.waiterId)) {
          passWakeup(name, head.waiterId); // gone: it leaves the queue, and the next one is woken
        }
      } else if (backend.notifies()) {
        try (PreparedStatement ps = db.prepare(c, "SELECT pg_notify(?, ?)")) {
          ps.setString(1, head.channel);
          ps.setString(2, FAIR + "\n" + head.waiterId + "\n" + name);
          ps.executeQuery().close();
        }
      }
    } catch (SQLException e) {
      log.debug("could not wake the head of fair lock '{}': {}", name, e.toString());
    }
  }

  /** Wakes the head if the lock is free now (no owner, or its lease ran out). */
  private void wakeHeadIfFree(Connection c, String name) throws SQLException {
    JdbcBackend.Row row = backend.read(c, FAIR, name);
    if (row == null || row.owner() == null || row.remaining() <= 0) {
      wakeHead(c, name);
    }
  }

  /**
   * The waiter gives up: its place goes; if the lock is free the head (perhaps the one behind it) is
   * woken, since this waiter may have been woken as the head already. Best effort: a removal that does
   * not arrive leaves a place that expires after the place timeout.
   */
  @Override
  public void cancelWait(String name, String waiterId) {
    backend.local.remove(waiterId);
    db.call("cancel a wait on fair lock '" + name + "'", c -> {
      if (leave(c, name, waiterId)) {
        wakeHeadIfFree(c, name);
      }
      return null;
    }, null);
  }

  /** A wake-up reached a waiter that is gone: it leaves the queue, and the new head is woken if the lock is free. */
  @Override
  public void passWakeup(String name, String goneWaiterId) {
    backend.local.remove(goneWaiterId);
    db.call("pass a wake-up on fair lock '" + name + "'", c -> {
      leave(c, name, goneWaiterId);
      wakeHeadIfFree(c, name);
      return null;
    }, null);
  }

  // ------------------------------------------------------------------ operators

  /** The holder; {@link LockInfo#waiters()} counts the queue's live places (on every dialect). */
  @Override
  public CompletionStage<Optional<LockInfo>> inspect(String name) {
    return db.call("inspect fair lock '" + name + "'", c -> {
      try (PreparedStatement ps = db.prepare(c, sql.inspect)) {
        backend.bindKey(ps, 1, FAIR, name);
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next()) {
            return Optional.<LockInfo>empty();
          }
          return Optional.of(new LockInfo(name, rs.getString(1), rs.getInt(2), rs.getLong(3),
              Duration.ofMillis(Math.max(0, rs.getLong(4))), queued(c, name)));
        }
      }
    }, null);
  }

  private int queued(Connection c, String name) throws SQLException {
    try (PreparedStatement ps = db.prepare(c, fair.count)) {
      backend.bindKey(ps, 1, FAIR, name);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getInt(1) : 0;
      }
    }
  }

  /**
   * Frees the lock whoever holds it, tells the evicted holder (as the exclusive lock does) and wakes the
   * head of the queue; the queue stays.
   */
  @Override
  public CompletionStage<Boolean> forceUnlock(String name) {
    return db.call("force-unlock fair lock '" + name + "'", c -> {
      String evicted = backend.operators.evictHolder(c, FAIR, name);
      if (evicted == null) {
        return false;
      }
      backend.operators.tellEvicted(c, FAIR, name, List.of(evicted));
      wakeHead(c, name);
      return true;
    }, null);
  }

  /**
   * Hygiene for {@link JdbcBackend#purgeExpired}: fair lock rows whose last lease ended more than {@code
   * grace} ago and that nobody queues for, and (on MariaDB and H2, where the backend has no waiters of
   * its own) expired places.
   */
  int purge(Connection c, Duration grace) throws SQLException {
    int n = 0;
    if (!backend.notifies()) {
      try (PreparedStatement ps = db.prepare(c, fair.purgePlaces)) {
        ps.setString(1, backend.namespace);
        n += ps.executeUpdate();
      }
    }
    try (PreparedStatement ps = db.prepare(c, fair.purgeRows)) {
      ps.setString(1, backend.namespace);
      ps.setLong(2, grace.toMillis());
      n += ps.executeUpdate();
    }
    return n;
  }
}
