package io.locksmith.jdbc;

import io.locksmith.Capabilities;
import io.locksmith.FencingGuarantee;
import io.locksmith.LockInfo;
import io.locksmith.LockKind;
import io.locksmith.spi.AcquireMode;
import io.locksmith.spi.AcquireReply;
import io.locksmith.spi.BackendContext;
import io.locksmith.spi.LockBackend;
import io.locksmith.spi.RenewRequest;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The exclusive lock held on a pinned connection, for {@link JdbcLockMode#ROW_LOCK} (a row lock in an
 * open transaction) and {@link JdbcLockMode#ADVISORY} (a session-level PostgreSQL advisory lock). Each
 * held lock keeps its own connection, borrowed at the grant and given back at the release; the database
 * frees the lock when that connection's transaction or session ends, whoever ends it (the holder, a
 * crash of its process, the network). Attempts do not block in the database ({@code NOWAIT}, {@code
 * pg_try_advisory_lock}); waiters poll with capped exponential backoff and jitter, and a release wakes a
 * waiter of the same client at once.
 *
 * <p>A lease still applies: each held lock has a deadline, pushed back by every renewal; a holder that
 * misses it (a fixed lease that ran out, renewals that stopped) has its transaction or session ended by
 * the client, which frees the lock. Re-entry is counted here (the connection is the holder's). Fencing
 * tokens come from the sequence, drawn on the pinned connection after the lock was taken. Thread-safe.
 */
final class PinnedBackend implements LockBackend {
  private static final Logger log = LoggerFactory.getLogger(PinnedBackend.class);
  private static final char KIND = 'R';

  private final JdbcBackend.Settings settings;
  private final JdbcLockMode mode;
  private final Sql sql;
  private final Db db;
  private final Capabilities capabilities;
  private final ConcurrentHashMap<String, Held> held = new ConcurrentHashMap<>();
  private final LateGrants lateGrants = new LateGrants();
  private String namespace;
  private LocalWaiters local;
  private io.locksmith.spi.BackendEvents events = io.locksmith.spi.BackendEvents.NONE;
  private ScheduledFuture<?> watchdog;
  /** How often every pinned connection is checked: a session the database ended is a lock lost. */
  static final long WATCHDOG_MILLIS = 500;

  /** One held lock: its connection, token, local hold count and deadline. Guarded by itself. */
  private static final class Held {
    final String name;
    final String owner;
    final Connection connection;
    final long token;
    final long advisoryKey;
    /** ADVISORY: the server session (backend pid) that was granted the lock; 0 otherwise. */
    final int backendPid;
    /** The connection's network timeout when borrowed, given back with it; -1: not changed. */
    final int networkTimeoutBefore;
    int holds = 1;
    boolean ended;
    ScheduledFuture<?> deadline;
    long deadlineNanos;

    Held(String name, String owner, Connection connection, long token, long advisoryKey, int backendPid,
        int networkTimeoutBefore) {
      this.networkTimeoutBefore = networkTimeoutBefore;
      this.name = name;
      this.owner = owner;
      this.connection = connection;
      this.token = token;
      this.advisoryKey = advisoryKey;
      this.backendPid = backendPid;
    }
  }

  PinnedBackend(JdbcBackend.Settings settings, JdbcLockMode mode, Db db) {
    if (mode == JdbcLockMode.ADVISORY && settings.dialect() != JdbcDialect.POSTGRESQL) {
      throw new IllegalArgumentException("advisory locks exist on PostgreSQL only, not on " + settings.dialect());
    }
    this.settings = settings;
    this.mode = mode;
    this.sql = new Sql(settings.dialect(), settings.table());
    this.db = db;
    this.capabilities = new Capabilities("jdbc-" + mode.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-')
        + "-" + settings.dialect().name().toLowerCase(java.util.Locale.ROOT), EnumSet.of(LockKind.EXCLUSIVE),
        FencingGuarantee.STRICT, false);
  }

  @Override
  public void open(BackendContext context) {
    this.namespace = context.namespace();
    this.local = new LocalWaiters(context.wakeups());
    this.events = context.events();
    this.watchdog = db.timer().scheduleWithFixedDelay(() -> {
      if (!held.isEmpty()) {
        db.callBare("check the pinned connections", () -> {
          checkPinned();
          return null;
        }, null);
      }
    }, WATCHDOG_MILLIS, WATCHDOG_MILLIS, TimeUnit.MILLISECONDS);
  }

  /**
   * A pinned connection that is no longer valid means the database ended the transaction or session
   * (an operator's {@code pg_terminate_backend}, a restart, a network failure): the lock is gone, and
   * its holder is told now rather than at its next renewal.
   */
  private void checkPinned() {
    for (Held h : new ArrayList<>(held.values())) {
      boolean alive;
      synchronized (h) {
        if (h.ended) {
          continue;
        }
        alive = stillHeld(h);
      }
      if (!alive) {
        events.ownerEvicted(io.locksmith.spi.HoldKind.EXCLUSIVE, h.name, h.owner, mode == JdbcLockMode.ADVISORY
            ? "the session that holds the lock ended, or the connection now reaches another session"
            : "the database ended the session that held the lock");
        finish(h, false);
      }
    }
  }

  /**
   * Whether the pinned connection still holds the lock. Row lock: the connection is valid (its open
   * transaction holds the row). Advisory: it reaches the very server session that was granted the lock
   * (the backend pid recorded at the grant) and that session holds it; behind a transaction-pooling proxy
   * the same connection can reach another session, which must not pass for the holder. Caller holds h.
   */
  private boolean stillHeld(Held h) {
    try {
      if (mode != JdbcLockMode.ADVISORY) {
        return h.connection.isValid((int) Math.max(1, settings.commandTimeout().toSeconds()));
      }
      try (PreparedStatement ps = db.prepare(h.connection, "SELECT pg_backend_pid(), EXISTS (" + HELD_BY_THIS_SESSION
          + ")")) {
        bindAdvisoryKey(ps, 1, h.advisoryKey);
        try (ResultSet rs = ps.executeQuery()) {
          int pid = rs.next() ? rs.getInt(1) : -1;
          boolean holds = pid >= 0 && rs.getBoolean(2);
          if (pid != h.backendPid || !holds) {
            log.warn("advisory lock '{}' was granted to server session {}; its connection now reaches session {},"
                + " which {} it (a transaction-pooling proxy between client and server?): the lease is lost",
                h.name, h.backendPid, pid, holds ? "holds" : "does not hold");
            return false;
          }
          return true;
        }
      }
    } catch (SQLException e) {
      return false;
    }
  }

  /** The advisory lock {@code (classid, objid)} = the key's halves, held by this very session. */
  private static final String HELD_BY_THIS_SESSION = "SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted"
      + " AND objsubid = 1 AND pid = pg_backend_pid() AND classid::bigint = ? AND objid::bigint = ?";

  private static int bindAdvisoryKey(PreparedStatement ps, int i, long key) throws SQLException {
    ps.setLong(i, (key >>> 32) & 0xffffffffL);
    ps.setLong(i + 1, key & 0xffffffffL);
    return i + 2;
  }

  @Override
  public Capabilities capabilities() {
    return capabilities;
  }

  private static String key(String name, String owner) {
    return owner + '\n' + name;
  }

  @Override
  public CompletionStage<AcquireReply> acquire(String name, String owner, long leaseMillis, AcquireMode mode,
      String waiterId) {
    if (mode == AcquireMode.REENTER) {
      AcquireReply here = heldHere(name, owner, leaseMillis, true);
      return CompletableFuture.completedFuture(here != null ? here : AcquireReply.lostHold());
    }
    // An attempt waits for a give-back of its owner in progress (LateGrants): until that is over, a held
    // lock found here may be the one being given back.
    LateGrants.Attempt attempt = lateGrants.begin(LateGrants.key(KIND, name, owner));
    if (attempt.gate().toCompletableFuture().isDone()) {
      AcquireReply here = heldHere(name, owner, leaseMillis, false);
      if (here != null) {
        lateGrants.settled(attempt, here.granted(), true, () -> giveBack(name, owner));
        return CompletableFuture.completedFuture(here);
      }
    }
    return db.callBare("lock '" + name + "'", () -> {
      AcquireReply here = heldHere(name, owner, leaseMillis, false);
      return here != null ? here : tryLock(name, owner, leaseMillis, waiterId);
    }, attempt.gate(), (reply, answered) -> lateGrants.settled(attempt, reply != null && reply.granted(), answered,
        () -> giveBack(name, owner)));
  }

  /**
   * The owner's lock if this client holds it: one more hold ({@code reenter}), or, for a new attempt of
   * the owner whose earlier attempt's grant it is, that hold as one hold; null if not held here.
   */
  private AcquireReply heldHere(String name, String owner, long leaseMillis, boolean reenter) {
    Held mine = held.get(key(name, owner));
    if (mine == null) {
      return null;
    }
    synchronized (mine) {
      if (mine.ended) {
        return reenter ? AcquireReply.lostHold() : AcquireReply.busy(1);
      }
      mine.holds = reenter ? mine.holds + 1 : 1;
      arm(mine, leaseMillis);
      return AcquireReply.granted(mine.token, mine.holds);
    }
  }

  /**
   * Gives back a lock whose grant came after its call timed out, when {@link LateGrants} found that no
   * later attempt of the owner holds it.
   *
   * @return completes once the give-back's work is over
   */
  private CompletionStage<?> giveBack(String name, String owner) {
    Held h = held.get(key(name, owner));
    if (h == null) {
      return CompletableFuture.completedFuture(null);
    }
    CompletableFuture<Void> over = new CompletableFuture<>();
    db.callBare("give back '" + name + "'", () -> finish(h, true) ? 0 : -1, null, (v, answered) -> over.complete(null));
    return over;
  }

  /** Borrows a connection of its own (not the worker's) and tries the lock on it without waiting. */
  private AcquireReply tryLock(String name, String owner, long leaseMillis, String waiterId) throws SQLException {
    DataSource ds = settings.dataSource();
    Connection c = ds.getConnection();
    boolean keep = false;
    int networkTimeoutBefore = -1;
    try {
      networkTimeoutBefore = db.pinNetworkTimeout(c);
      long advisoryKey = advisoryKey(name);
      long rowToken = mode == JdbcLockMode.ROW_LOCK ? lockRow(c, name) : NOT_LOCKED;
      int backendPid = mode == JdbcLockMode.ROW_LOCK ? (rowToken != NOT_LOCKED ? 0 : -1) : lockAdvisory(c, advisoryKey);
      boolean locked = backendPid >= 0;
      if (!locked) {
        if (waiterId == null) {
          return AcquireReply.busy(0);
        }
        int attempts = local.refused(KIND, name, waiterId);
        return AcquireReply.busy(LocalWaiters.pollDelay(attempts, settings.pollMin().toMillis(),
            settings.pollMax().toMillis(), -1));
      }
      long token;
      try (PreparedStatement ps = db.prepare(c, sql.nextToken); ResultSet rs = ps.executeQuery()) {
        rs.next();
        token = rs.getLong(1);
      }
      if (mode == JdbcLockMode.ROW_LOCK) {
        // never at or below the token the row records (a sequence set back behind it), as read when locked
        token = Math.max(token, rowToken + 1);
        // the row records its last holder; the update commits with the release
        try (PreparedStatement ps = db.prepare(c, "UPDATE " + sql.table + " SET owner = ?, holds = 1, token = ?"
            + " WHERE namespace = ? AND kind = ? AND lock_name = ?")) {
          ps.setString(1, owner);
          ps.setLong(2, token);
          ps.setString(3, namespace);
          ps.setString(4, String.valueOf(KIND));
          ps.setString(5, name);
          ps.executeUpdate();
        }
      }
      Held h = new Held(name, owner, c, token, advisoryKey, backendPid, networkTimeoutBefore);
      synchronized (h) {
        arm(h, leaseMillis);
      }
      held.put(key(name, owner), h);
      local.remove(waiterId);
      keep = true;
      return AcquireReply.granted(token, 1);
    } finally {
      if (!keep) {
        end(c, networkTimeoutBefore);
      }
    }
  }

  /**
   * Takes the row lock without waiting, in a transaction left open on {@code c}. The row is inserted
   * (in autocommit) only when the name has none yet: an insert-if-missing on a row another session has
   * locked would wait for that lock.
   */
  /** @return the locked row's token, or {@link #NOT_LOCKED} if another session holds it */
  private long lockRow(Connection c, String name) throws SQLException {
    Long locked = selectForUpdateNowait(c, name);
    if (locked != null) {
      return locked;
    }
    try (PreparedStatement ps = db.prepare(c, sql.metaEnsure)) {
      ps.setString(1, namespace);
      ps.setString(2, String.valueOf(KIND));
      ps.setString(3, name);
      ps.setNull(4, Types.INTEGER);
      ps.executeUpdate();
    } catch (SQLException e) {
      if (Db.classify(e) != Db.Kind.RETRY) { // another session inserted it first: fine
        throw e;
      }
    }
    locked = selectForUpdateNowait(c, name);
    return locked != null ? locked : NOT_LOCKED;
  }

  /** A row another session holds locked (tokens are never negative). */
  private static final long NOT_LOCKED = Long.MIN_VALUE;

  /**
   * @return the row's token if locked, {@link #NOT_LOCKED} if another session holds it, null if there is no
   *     row (autocommit back on)
   */
  private Long selectForUpdateNowait(Connection c, String name) throws SQLException {
    c.setAutoCommit(false);
    try (PreparedStatement ps = db.prepare(c, "SELECT token FROM " + sql.table
        + " WHERE namespace = ? AND kind = ? AND lock_name = ? FOR UPDATE NOWAIT")) {
      ps.setString(1, namespace);
      ps.setString(2, String.valueOf(KIND));
      ps.setString(3, name);
      try (ResultSet rs = ps.executeQuery()) {
        if (rs.next()) {
          return rs.getLong(1);
        }
      }
    } catch (SQLException e) {
      if (isLockNotAvailable(e)) {
        return NOT_LOCKED;
      }
      throw e;
    }
    c.rollback();
    c.setAutoCommit(true);
    return null;
  }

  /** PostgreSQL 55P03; MariaDB 1205/3572 (NOWAIT); H2 HYT00. */
  static boolean isLockNotAvailable(SQLException e) {
    String state = String.valueOf(e.getSQLState());
    return state.equals("55P03") || state.equals("HYT00") || e.getErrorCode() == 1205
        || e.getErrorCode() == 3572 || e.getErrorCode() == 1969;
  }

  /**
   * Tries the advisory lock, refusing it if this very session holds it already: advisory locks are
   * re-entrant per session, so a transaction-pooling proxy that routed this client to the holder's session
   * would otherwise be granted the holder's lock a second time.
   *
   * @return the server session's backend pid if locked, -1 if not
   */
  private int lockAdvisory(Connection c, long key) throws SQLException {
    try (PreparedStatement ps = db.prepare(c, "WITH mine AS MATERIALIZED (SELECT EXISTS (" + HELD_BY_THIS_SESSION
        + ") AS held) SELECT CASE WHEN held THEN false ELSE pg_try_advisory_lock(?) END, pg_backend_pid() FROM mine")) {
      int i = bindAdvisoryKey(ps, 1, key);
      ps.setLong(i, key);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && rs.getBoolean(1) ? rs.getInt(2) : -1;
      }
    }
  }

  private long advisoryKey(String name) {
    return advisoryKey(namespace, name);
  }

  /** 64 bits of SHA-256 over namespace and name: the advisory lock key (a collision makes two names share). */
  static long advisoryKey(String namespace, String name) {
    try {
      byte[] h = MessageDigest.getInstance("SHA-256")
          .digest((namespace + "\u0000" + name).getBytes(StandardCharsets.UTF_8));
      long k = 0;
      for (int i = 0; i < 8; i++) {
        k = (k << 8) | (h[i] & 0xff);
      }
      return k;
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** (Re)sets the deadline after which the client ends the holder's transaction or session. */
  private void arm(Held h, long leaseMillis) {
    if (h.deadline != null) {
      h.deadline.cancel(false);
    }
    h.deadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(leaseMillis);
    h.deadline = db.timer().schedule(() -> {
      log.warn("lock '{}' was not renewed within its lease; ending its {} to free it", h.name,
          mode == JdbcLockMode.ROW_LOCK ? "transaction" : "session");
      CompletableFuture.runAsync(() -> finish(h, false));
    }, leaseMillis, TimeUnit.MILLISECONDS);
  }

  /** Ends a held lock: commit (row lock) or unlock (advisory), then the connection goes back. */
  private boolean finish(Held h, boolean byHolder) {
    synchronized (h) {
      if (h.ended) {
        return false;
      }
      h.ended = true;
      if (h.deadline != null) {
        h.deadline.cancel(false);
      }
    }
    held.remove(key(h.name, h.owner), h);
    boolean clean = true;
    try {
      if (mode == JdbcLockMode.ROW_LOCK) {
        try (PreparedStatement ps = db.prepare(h.connection, "UPDATE " + sql.table + " SET owner = NULL, holds = 0"
            + " WHERE namespace = ? AND kind = ? AND lock_name = ?")) {
          ps.setString(1, namespace);
          ps.setString(2, String.valueOf(KIND));
          ps.setString(3, h.name);
          ps.executeUpdate();
        }
        h.connection.commit();
      } else {
        try (PreparedStatement ps = db.prepare(h.connection, "SELECT pg_advisory_unlock(?)")) {
          ps.setLong(1, h.advisoryKey);
          try (ResultSet rs = ps.executeQuery()) {
            clean = rs.next() && rs.getBoolean(1);
          }
        }
      }
    } catch (SQLException e) {
      // usually the connection broke, and the database ended the transaction or session, which freed the
      // lock; but an unlock can also fail on a healthy connection (a statement timeout, a cancel)
      clean = false;
      log.debug("ending lock '{}': {}", h.name, e.toString());
    } finally {
      if (mode == JdbcLockMode.ADVISORY && !clean) {
        // the session may still hold the lock (the unlock failed) or is not the granted one (false): end it
        // rather than give it back to the pool, where an idle connection would keep the lock forever
        Db.evict(h.connection);
      }
      end(h.connection, h.networkTimeoutBefore);
    }
    local.wake(KIND, h.name, 1);
    return clean && byHolder;
  }

  /** Gives a connection back in the state it was borrowed in; a broken one is closed all the same. */
  private void end(Connection c, int networkTimeoutBefore) {
    try {
      if (!c.getAutoCommit()) {
        c.rollback();
        c.setAutoCommit(true);
      }
    } catch (SQLException ignored) {
      // broken; the pool discards it
    }
    db.restoreNetworkTimeout(c, networkTimeoutBefore);
    try {
      c.close();
    } catch (SQLException ignored) {
      // nothing more to do
    }
  }

  @Override
  public CompletionStage<Integer> release(String name, String owner, boolean all) {
    Held h = held.get(key(name, owner));
    if (h == null) {
      return CompletableFuture.completedFuture(-1);
    }
    synchronized (h) {
      if (h.ended) {
        return CompletableFuture.completedFuture(-1);
      }
      if (!all && h.holds > 1) {
        h.holds--;
        return CompletableFuture.completedFuture(h.holds);
      }
    }
    CompletableFuture<Void> over = lateGrants.releasing(LateGrants.key(KIND, name, owner));
    return db.callBare("unlock '" + name + "'", () -> finish(h, true) ? 0 : -1, null,
        (v, answered) -> over.complete(null));
  }

  @Override
  public CompletionStage<List<Boolean>> renew(List<RenewRequest> requests) {
    return db.callBare("check " + requests.size() + " held lock(s)", () -> {
      List<Boolean> out = new ArrayList<>();
      for (RenewRequest r : requests) {
        Held h = held.get(key(r.name(), r.owner()));
        boolean alive = false;
        if (h != null) {
          synchronized (h) {
            alive = !h.ended && stillHeld(h);
            if (alive) {
              arm(h, r.leaseMillis());
            }
          }
          if (!alive) {
            CompletableFuture.runAsync(() -> finish(h, false));
          }
        }
        out.add(alive);
      }
      return out;
    }, null);
  }

  @Override
  public void cancelWait(String name, String waiterId) {
    local.remove(waiterId);
  }

  @Override
  public void passWakeup(String name, String goneWaiterId) {
    local.remove(goneWaiterId);
    local.wake(KIND, name, 1);
  }

  /**
   * A lock held by this client is described fully; one held elsewhere is found by probing it (the row
   * lock with {@code SKIP LOCKED}, the advisory lock in {@code pg_locks}), and its owner and token are
   * the ones its holder recorded, as far as they are visible (a row lock's record commits with the
   * release, so another client sees {@code "unknown"} and the previous token).
   */
  @Override
  public CompletionStage<Optional<LockInfo>> inspect(String name) {
    for (Held h : held.values()) {
      if (h.name.equals(name) && !h.ended) {
        long left;
        synchronized (h) {
          left = Math.max(0, h.deadlineNanos - System.nanoTime());
        }
        return CompletableFuture.completedFuture(Optional.of(new LockInfo(name, h.owner, h.holds, h.token,
            Duration.ofNanos(left), 0)));
      }
    }
    return db.call("inspect '" + name + "'", c -> {
      boolean taken;
      if (mode == JdbcLockMode.ADVISORY) {
        long k = advisoryKey(name);
        try (PreparedStatement ps = db.prepare(c, "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory'"
            + " AND granted AND objsubid = 1 AND classid::bigint = ? AND objid::bigint = ?")) {
          ps.setLong(1, (k >>> 32) & 0xffffffffL);
          ps.setLong(2, k & 0xffffffffL);
          try (ResultSet rs = ps.executeQuery()) {
            taken = rs.next() && rs.getInt(1) > 0;
          }
        }
      } else {
        c.setAutoCommit(false);
        try (PreparedStatement ps = db.prepare(c, "SELECT token FROM " + sql.table
            + " WHERE namespace = ? AND kind = ? AND lock_name = ? FOR UPDATE NOWAIT")) {
          ps.setString(1, namespace);
          ps.setString(2, String.valueOf(KIND));
          ps.setString(3, name);
          try (ResultSet rs = ps.executeQuery()) {
            taken = false; // we got it: nobody holds it (rolled back below)
          }
        } catch (SQLException e) {
          if (!isLockNotAvailable(e)) {
            throw e;
          }
          taken = true;
        }
        c.rollback();
        c.setAutoCommit(true);
      }
      return taken ? Optional.of(new LockInfo(name, "unknown (held in another session)", 1, 0, Duration.ZERO, 0))
          : Optional.<LockInfo>empty();
    }, null);
  }

  /**
   * Ends a lock whoever holds it. One this client holds is ended here. On PostgreSQL one held by another
   * session is ended by terminating that session ({@code pg_terminate_backend}), found exactly: the
   * session holding the advisory lock in {@code pg_locks}, or the transaction whose id is the locked
   * row's {@code xmax}; its holder finds its lease lost at its next renewal. Through JDBC there is no
   * such way on MariaDB and H2: there a lock held by another client is not touched and this returns
   * false.
   */
  @Override
  public CompletionStage<Boolean> forceUnlock(String name) {
    for (Held h : held.values()) {
      if (h.name.equals(name)) {
        return db.callBare("force-unlock '" + name + "'", () -> {
          boolean ended = finish(h, true);
          if (ended) {
            events.ownerEvicted(io.locksmith.spi.HoldKind.EXCLUSIVE, h.name, h.owner, "force-unlocked by an operator");
          }
          return ended;
        }, null);
      }
    }
    if (settings.dialect() != JdbcDialect.POSTGRESQL) {
      return CompletableFuture.completedFuture(false);
    }
    return db.call("force-unlock '" + name + "'", c -> {
      String find;
      if (mode == JdbcLockMode.ADVISORY) {
        find = "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1"
            + " AND classid::bigint = ? AND objid::bigint = ?";
      } else {
        find = "SELECT l.pid FROM pg_locks l, " + sql.table + " t WHERE t.namespace = ? AND t.kind = ?"
            + " AND t.lock_name = ? AND l.locktype = 'transactionid' AND l.mode = 'ExclusiveLock' AND l.granted"
            + " AND l.transactionid::text = t.xmax::text AND l.pid <> pg_backend_pid()";
      }
      int ended = 0;
      try (PreparedStatement ps = db.prepare(c, "SELECT pg_terminate_backend(pid, 5000) FROM (" + find + ") h")) {
        if (mode == JdbcLockMode.ADVISORY) {
          long k = advisoryKey(name);
          ps.setLong(1, (k >>> 32) & 0xffffffffL);
          ps.setLong(2, k & 0xffffffffL);
        } else {
          ps.setString(1, namespace);
          ps.setString(2, String.valueOf(KIND));
          ps.setString(3, name);
        }
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            if (rs.getBoolean(1)) {
              ended++;
            }
          }
        }
      }
      return ended > 0;
    }, null);
  }

  /** At most this many row-lock rows are looked at by one purge. */
  static final int PURGE_BATCH = 1_000;

  /**
   * Row-lock mode: deletes this namespace's lock rows that no session has locked (a held lock's row is
   * locked by its holder's transaction and skipped, without waiting). A deleted row is inserted again by
   * the next attempt on its name; its tokens come from the sequence, not the row. Advisory mode keeps no
   * rows: 0.
   *
   * @return how many rows were deleted
   */
  CompletableFuture<Integer> purgeRows() {
    if (mode != JdbcLockMode.ROW_LOCK) {
      return CompletableFuture.completedFuture(0);
    }
    return db.call("purge free lock rows", c -> {
      List<String> names = new ArrayList<>();
      try (PreparedStatement ps = db.prepare(c, "SELECT lock_name FROM " + sql.table
          + " WHERE namespace = ? AND kind = ?")) {
        ps.setMaxRows(PURGE_BATCH);
        ps.setString(1, namespace);
        ps.setString(2, String.valueOf(KIND));
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            names.add(rs.getString(1));
          }
        }
      }
      int deleted = 0;
      for (String name : names) {
        c.setAutoCommit(false);
        try {
          Long locked = selectForUpdateNowait(c, name); // null: gone already (autocommit back on)
          if (locked != null && locked != NOT_LOCKED) {
            try (PreparedStatement ps = db.prepare(c, "DELETE FROM " + sql.table
                + " WHERE namespace = ? AND kind = ? AND lock_name = ?")) {
              ps.setString(1, namespace);
              ps.setString(2, String.valueOf(KIND));
              ps.setString(3, name);
              deleted += ps.executeUpdate();
            }
          }
          if (!c.getAutoCommit()) {
            c.commit(); // releases the row lock, or ends a refusal's empty transaction
          }
        } finally {
          if (!c.getAutoCommit()) {
            c.rollback();
            c.setAutoCommit(true);
          }
        }
      }
      return deleted;
    }, null);
  }

  @Override
  public void close() {
    if (watchdog != null) {
      watchdog.cancel(false);
    }
    for (Held h : new ArrayList<>(held.values())) {
      finish(h, false);
    }
    db.close();
  }
}
