package io.locksmith.jdbc;

import io.locksmith.Capabilities;
import io.locksmith.FencingGuarantee;
import io.locksmith.LockInfo;
import io.locksmith.LockKind;
import io.locksmith.spi.AcquireMode;
import io.locksmith.spi.AcquireReply;
import io.locksmith.spi.BackendContext;
import io.locksmith.spi.HandOffOps;
import io.locksmith.spi.HandOffReply;
import io.locksmith.spi.LockBackend;
import io.locksmith.spi.RenewRequest;
import io.locksmith.spi.SemaphoreOps;
import io.locksmith.spi.WakeupSink;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The JDBC backend: the exclusive lease lock (this class), the fair lock ({@link JdbcFairOps}), the
 * read-write lock ({@link JdbcReadWriteOps}) and the semaphore ({@link JdbcSemaphoreOps}) over one table,
 * its permits', waiters' and read-write tables and one token sequence, with the statements of one dialect
 * ({@link Sql}). All blocking work runs through {@link Db}. On PostgreSQL the exclusive lock's releases
 * wake waiters through their clients' channels and may hand the lock to a waiting owner of the same client
 * in one statement: this class picks the statement, {@link PgRelease} runs it, {@link LocalHandOff} counts
 * the runs. The operators' functions (inspect, force-unlock, purge) are {@link JdbcOperators}'. This class
 * holds the wiring: the client's identity, the notifications' routing and every kind's operations.
 * Thread-safe.
 */
final class JdbcBackend implements LockBackend, HandOffOps {
  private static final Logger log = LoggerFactory.getLogger(JdbcBackend.class);
  static final char LOCK = 'L';
  static final char SEMAPHORE = 'S';
  static final char FAIR = 'F';
  /** The read-write lock's writer ({@link ReadWriteSql#WRITER}); its readers' wake-ups and notices use 'R'. */
  static final char WRITE = ReadWriteSql.WRITER;
  static final char READ = ReadWriteSql.READER;
  /** First field of an eviction notice. */
  static final char EVICTED = 'E';

  final Settings settings;
  final Sql sql;
  final Db db;
  private final Capabilities capabilities;
  String namespace;
  String clientId;
  String channel;
  LocalWaiters local;
  WakeupSink sink;
  io.locksmith.spi.BackendEvents events = io.locksmith.spi.BackendEvents.NONE;
  private PgListener listener;
  private JdbcSemaphoreOps semaphoreWakes;
  /** The fair lock's operations (its rows and queue are kind {@link #FAIR}). */
  final JdbcFairOps fair;
  private JdbcReadWriteOps readWrite;
  /** PostgreSQL: names this client saw contended lately, to pick the cheaper statements for the others. */
  final Contention contention = new Contention();
  /** Which grants that came after their call timed out may be given back (lock and semaphore). */
  final LateGrants lateGrants = new LateGrants();
  /** PostgreSQL: runs of local hand-offs and this client's reservations for other clients' waiters. */
  final LocalHandOff handOffs = new LocalHandOff();
  /** PostgreSQL: the statements of the exclusive lock's releases and local hand-offs. */
  private final PgRelease pgRelease;
  /** The operators' functions: inspect, force-unlock, waiter counts, eviction notices, purge. */
  final JdbcOperators operators;

  /** What the builder validated. */
  record Settings(DataSource dataSource, DataSource listenerDataSource, JdbcDialect dialect, String table,
      Duration commandTimeout, Duration waiterRecheck, Duration pollMin, Duration pollMax,
      int maxConcurrency) {}

  JdbcBackend(Settings settings, Db db) {
    this.settings = settings;
    this.sql = new Sql(settings.dialect(), settings.table());
    this.db = db;
    this.capabilities = new Capabilities("jdbc-" + settings.dialect().name().toLowerCase(java.util.Locale.ROOT),
        EnumSet.of(LockKind.EXCLUSIVE, LockKind.FAIR, LockKind.READ_WRITE, LockKind.SEMAPHORE),
        FencingGuarantee.STRICT, notifies());
    this.fair = new JdbcFairOps(this);
    this.pgRelease = new PgRelease(this);
    this.operators = new JdbcOperators(this);
  }

  boolean notifies() {
    return settings.dialect() == JdbcDialect.POSTGRESQL;
  }

  @Override
  public void open(BackendContext context) {
    this.namespace = context.namespace();
    this.clientId = context.clientId();
    this.sink = context.wakeups();
    this.events = context.events();
    this.local = new LocalWaiters(sink);
    this.channel = "locksmith_" + clientId;
    this.semaphoreWakes = new JdbcSemaphoreOps(this, 1);
    this.readWrite = new JdbcReadWriteOps(this);
    if (notifies()) {
      listener = new PgListener(settings.listenerDataSource(), channel, this::onNotification, local::wakeAll,
          settings.commandTimeout(), clientId);
      listener.start();
    }
  }

  /**
   * A notification on our channel: a release addressed one of our waiters ({@code kind \n waiterId \n
   * name}), or an operator evicted one of our holds ({@code E \n kind \n owner \n name}).
   */
  private void onNotification(String payload) {
    if (payload.startsWith(EVICTED + "\n")) {
      String[] f = payload.split("\n", 4);
      if (f.length == 4 && f[1].length() == 1) {
        events.ownerEvicted(holdKind(f[1].charAt(0)), f[3], f[2], "force-unlocked by an operator");
      }
      return;
    }
    int first = payload.indexOf('\n');
    int second = payload.indexOf('\n', first + 1);
    if (first != 1 || second < 0) {
      log.debug("ignoring a notification that is not a wake-up: {}", payload);
      return;
    }
    char kind = payload.charAt(0);
    String waiterId = payload.substring(first + 1, second);
    String name = payload.substring(second + 1);
    if (kind == LOCK) {
      handOffs.woken(name);
    }
    local.remove(waiterId);
    // the sink is the core's; a waiter that is gone hands the wake-up on
    if (!sink.wake(name, waiterId)) {
      if (kind == SEMAPHORE) {
        semaphoreWakes.passWakeup(name, waiterId);
      } else if (kind == FAIR) {
        fair.passWakeup(name, waiterId);
      } else if (kind == WRITE || kind == READ) {
        readWrite.side(kind).passWakeup(name, waiterId);
      } else {
        passWakeup(name, waiterId);
      }
    }
  }

  @Override
  public Capabilities capabilities() {
    return capabilities;
  }

  /**
   * The fair lock ({@link JdbcFairOps}) and the read-write lock's sides ({@link JdbcReadWriteOps}); the
   * exclusive lock is this backend itself.
   */
  @Override
  public io.locksmith.spi.LockOps ops(io.locksmith.spi.Primitive primitive) {
    return switch (primitive) {
      case FAIR -> fair;
      case READ -> readWrite.read();
      case WRITE -> readWrite.write();
      default -> LockBackend.super.ops(primitive);
    };
  }

  /** The read-write lock's operations, for the operators' walk. */
  JdbcReadWriteOps readWrite() {
    return readWrite;
  }

  /** The kind of hold a kind letter of a row or notice stands for. */
  static io.locksmith.spi.HoldKind holdKind(char kind) {
    return switch (kind) {
      case SEMAPHORE -> io.locksmith.spi.HoldKind.PERMIT;
      case FAIR -> io.locksmith.spi.HoldKind.FAIR;
      case WRITE -> io.locksmith.spi.HoldKind.WRITE;
      case READ -> io.locksmith.spi.HoldKind.READ;
      default -> io.locksmith.spi.HoldKind.EXCLUSIVE;
    };
  }

  /** Where this client's wake-ups go (set by {@link #open}). */
  WakeupSink sink() {
    return sink;
  }

  @Override
  public SemaphoreOps semaphoreOps(int declaredPermits) {
    return new JdbcSemaphoreOps(this, declaredPermits);
  }

  @Override
  public void close() {
    if (listener != null) {
      listener.close();
    }
    db.close();
  }

  // ------------------------------------------------------------------ exclusive lock

  @Override
  public CompletionStage<AcquireReply> acquire(String name, String owner, long leaseMillis, AcquireMode mode,
      String waiterId) {
    if (mode == AcquireMode.REENTER) {
      return db.call("re-enter '" + name + "'", c -> reenter(c, LOCK, name, owner, leaseMillis), null);
    }
    if (waiterId != null && notifies()) {
      long reserved = handOffs.reservedMillis(name);
      if (reserved > 0) {
        // this client ended a run of hand-offs by waking another client's waiter: leave it the lock
        return db.call("wait for '" + name + "'", c -> pgRelease.registerOnly(c, name, waiterId, reserved), null);
      }
    }
    LateGrants.Attempt attempt = lateGrants.begin(LateGrants.key(LOCK, name, owner));
    return Db.conflictAsRefusal(db.call("acquire '" + name + "'", c -> grant(c, name, owner, leaseMillis,
        waiterId), attempt.gate(), (reply, answered) -> lateGrants.settled(attempt, reply != null && reply.granted(),
            answered, () -> giveBack(name, owner))), AcquireReply.busy(pollMillis(0, -1)));
  }

  /**
   * Gives back a grant whose reply came after its call timed out, when {@link LateGrants} found that no
   * later attempt of the owner holds it.
   *
   * @return completes once the release's work is over, answered or not
   */
  CompletionStage<?> giveBack(String name, String owner) {
    CompletableFuture<Void> over = new CompletableFuture<>();
    db.call("give back '" + name + "'", releaseWork(name, owner, true), null, (left, answered) -> over.complete(null));
    return over;
  }

  private AcquireReply grant(Connection c, String name, String owner, long leaseMillis, String waiterId)
      throws SQLException {
    AcquireReply reply = ask(c, name, owner, leaseMillis, waiterId);
    if (reply.granted()) {
      handOffs.runEnded(name);
    }
    return reply;
  }

  private AcquireReply ask(Connection c, String name, String owner, long leaseMillis, String waiterId)
      throws SQLException {
    if (sql.dialect == JdbcDialect.POSTGRESQL) {
      // A name not seen contended lately is asked with the plain grant first (the registration's parts of
      // grantOrRegister cost about as much as the grant itself even when they do nothing); only a refusal
      // is followed by grantOrRegister, which asks again and registers in one statement. A waiter that
      // may already be registered (refused before) goes straight there: its grant removes the registration.
      if (waiterId == null || (!contention.recent(name) && !local.knows(waiterId))) {
        try (PreparedStatement ps = db.prepare(c, sql.grant)) {
          bindKey(ps, 1, LOCK, name);
          ps.setString(4, owner);
          ps.setLong(5, leaseMillis);
          try (ResultSet rs = ps.executeQuery()) {
            if (rs.next()) {
              local.remove(waiterId);
              return AcquireReply.granted(rs.getLong(1), rs.getInt(2));
            }
          }
        }
        contention.saw(name);
        if (waiterId == null) {
          return AcquireReply.busy(0);
        }
      }
      contention.saw(name);
      try (PreparedStatement ps = db.prepare(c, sql.grantOrRegister)) {
        int i = bindKey(ps, 1, LOCK, name);
        ps.setString(i++, owner);
        ps.setLong(i++, leaseMillis);
        i = bindKey(ps, i, LOCK, name);
        ps.setString(i++, waiterId);
        ps.setString(i++, channel);
        ps.setLong(i++, waiterTtlMillis());
        i = bindKey(ps, i, LOCK, name);
        ps.setString(i++, waiterId);
        i = bindKey(ps, i, LOCK, name); // the mark
        i = bindKey(ps, i, LOCK, name); // the holder's remaining time
        bindKey(ps, i, LOCK, name); // is it marked
        try (ResultSet rs = ps.executeQuery()) {
          long remaining = -1;
          boolean marked = false;
          while (rs.next()) {
            long token = rs.getLong(1);
            if (!rs.wasNull()) {
              local.remove(waiterId);
              return AcquireReply.granted(token, rs.getInt(2));
            }
            remaining = rs.getLong(3);
            if (rs.wasNull()) {
              remaining = -1;
            }
            marked = rs.getLong(4) > 0;
          }
          local.refused(LOCK, name, waiterId);
          // Unmarked: the row was not in this statement's snapshot (inserted concurrently), so a release
          // may skip the wake-up query; ask again at once, which marks it (or is granted).
          return AcquireReply.busy(marked ? recheckMillis(remaining) : 1);
        }
      }
    }
    try (PreparedStatement ps = db.prepare(c, sql.grant)) {
      bindKey(ps, 1, LOCK, name);
      ps.setString(4, owner);
      ps.setLong(5, leaseMillis);
      ps.executeUpdate();
    }
    Row row = read(c, LOCK, name);
    if (row != null && owner.equals(row.owner)) {
      local.remove(waiterId);
      return AcquireReply.granted(row.token, row.holds);
    }
    if (waiterId == null) {
      return AcquireReply.busy(0);
    }
    int attempts = local.refused(LOCK, name, waiterId);
    return AcquireReply.busy(pollMillis(attempts, row == null ? -1 : row.remaining));
  }

  /** A re-entry of {@code owner}'s unexpired hold of a lock row of {@code kind} (the exclusive or the fair lock). */
  AcquireReply reenter(Connection c, char kind, String name, String owner, long leaseMillis) throws SQLException {
    try (PreparedStatement ps = db.prepare(c, sql.reenter)) {
      ps.setLong(1, leaseMillis);
      bindKey(ps, 2, kind, name);
      ps.setString(5, owner);
      if (sql.dialect == JdbcDialect.POSTGRESQL) {
        try (ResultSet rs = ps.executeQuery()) {
          return rs.next() ? AcquireReply.granted(rs.getLong(1), rs.getInt(2)) : AcquireReply.lostHold();
        }
      }
      if (ps.executeUpdate() == 0) {
        return AcquireReply.lostHold();
      }
    }
    Row row = read(c, kind, name);
    return row != null && owner.equals(row.owner) ? AcquireReply.granted(row.token, row.holds)
        : AcquireReply.lostHold();
  }

  /**
   * The owner's release. The owner's next acquire attempts (the core retries with the same owner after
   * giving back a grant that came with no validity left) wait until this release's work is over, so it
   * cannot land after their grant ({@link LateGrants#releasing}).
   */
  @Override
  public CompletionStage<Integer> release(String name, String owner, boolean all) {
    CompletableFuture<Void> over = lateGrants.releasing(LateGrants.key(LOCK, name, owner));
    handOffs.runEnded(name);
    return db.call("release '" + name + "'", releaseWork(name, owner, all), null,
        (left, answered) -> over.complete(null));
  }

  private Db.Work<Integer> releaseWork(String name, String owner, boolean all) {
    if (notifies()) {
      if (contention.recent(name)) {
        return c -> pgRelease.releaseAndWake(c, name, owner, all);
      }
      return c -> pgRelease.releaseMarked(c, name, owner, all);
    }
    return c -> {
      int left = releaseRow(c, LOCK, name, owner, all);
      if (left == 0) {
        wakeNext(c, LOCK, name, 1);
      }
      return left;
    };
  }

  /**
   * Drops one or every hold of {@code owner} on a lock row of {@code kind} (the exclusive or the fair lock).
   *
   * @return the holds left, 0 when freed, -1 when {@code owner} did not hold it
   */
  int releaseRow(Connection c, char kind, String name, String owner, boolean all) throws SQLException {
    int threshold = all ? Integer.MAX_VALUE : 1;
    try (PreparedStatement ps = db.prepare(c, sql.release)) {
      ps.setInt(1, threshold);
      ps.setInt(2, threshold);
      ps.setInt(3, threshold);
      bindKey(ps, 4, kind, name);
      ps.setString(7, owner);
      if (sql.dialect == JdbcDialect.POSTGRESQL) {
        try (ResultSet rs = ps.executeQuery()) {
          return rs.next() ? rs.getInt(1) : -1;
        }
      }
      if (ps.executeUpdate() == 0) {
        return -1;
      }
    }
    if (all) {
      return 0;
    }
    Row row = read(c, kind, name); // only this owner changes its hold count; another owner means it was freed
    return row != null && owner.equals(row.owner) ? row.holds : 0;
  }

  /**
   * Wakes up to {@code count} waiters of a lock that has just been freed: on PostgreSQL the oldest
   * registered waiters (in any client) through their clients' channels, elsewhere this client's own
   * waiters at once (other clients' waiters poll). Best effort: a failure here costs the waiters one
   * backstop delay, never a wrong grant.
   */
  void wakeNext(Connection c, char kind, String name, int count) {
    if (count <= 0) {
      return;
    }
    if (!notifies()) {
      local.wake(kind, name, count);
      return;
    }
    try (PreparedStatement ps = db.prepare(c, sql.wake)) {
      int i = bindKey(ps, 1, kind, name);
      ps.setInt(i++, count);
      i = bindKey(ps, i, kind, name);
      ps.setString(i++, String.valueOf(kind));
      ps.setString(i, name);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          // one row per notified waiter
        }
      }
    } catch (SQLException e) {
      log.debug("could not wake a waiter of '{}': {}", name, e.toString());
    }
  }

  @Override
  public CompletionStage<List<Boolean>> renew(List<RenewRequest> requests) {
    return db.call("renew " + requests.size() + " lease(s)", c -> renewRows(c, sql.renew, requests, true), null);
  }

  /** One batch of owner-checked expiry updates; {@code withKind}: the statement has a kind column. */
  List<Boolean> renewRows(Connection c, String statement, List<RenewRequest> requests, boolean withKind)
      throws SQLException {
    return renewRows(c, statement, requests, withKind ? LOCK : 0);
  }

  /** One batch of owner-checked expiry updates of rows of {@code kind}, or without a kind column if 0. */
  List<Boolean> renewRows(Connection c, String statement, List<RenewRequest> requests, char kind)
      throws SQLException {
    boolean withKind = kind != 0;
    try (PreparedStatement ps = db.prepare(c, statement)) {
      for (RenewRequest r : requests) {
        int i = 1;
        ps.setLong(i++, r.leaseMillis());
        ps.setString(i++, namespace);
        if (withKind) {
          ps.setString(i++, String.valueOf(kind));
        }
        ps.setString(i++, r.name());
        ps.setString(i, r.owner());
        ps.addBatch();
      }
      int[] counts = ps.executeBatch();
      List<Boolean> out = new ArrayList<>(counts.length);
      boolean unknown = false;
      for (int n : counts) {
        unknown |= n == Statement.SUCCESS_NO_INFO;
        out.add(n > 0);
      }
      if (!unknown) {
        return out;
      }
    }
    // a driver that batches without per-row counts (bulk protocols): ask one by one; renewing twice is
    // harmless (each only if still owned)
    List<Boolean> out = new ArrayList<>(requests.size());
    for (RenewRequest r : requests) {
      try (PreparedStatement ps = db.prepare(c, statement)) {
        int i = 1;
        ps.setLong(i++, r.leaseMillis());
        ps.setString(i++, namespace);
        if (withKind) {
          ps.setString(i++, String.valueOf(kind));
        }
        ps.setString(i++, r.name());
        ps.setString(i, r.owner());
        out.add(ps.executeUpdate() > 0);
      }
    }
    return out;
  }

  @Override
  public void cancelWait(String name, String waiterId) {
    local.remove(waiterId);
    if (notifies()) {
      db.call("cancel a wait on '" + name + "'", c -> removeWaiter(c, LOCK, name, waiterId), null);
    }
  }

  Integer removeWaiter(Connection c, char kind, String name, String waiterId) throws SQLException {
    try (PreparedStatement ps = db.prepare(c, sql.waiterRemove)) {
      bindKey(ps, 1, kind, name);
      ps.setString(4, waiterId);
      return ps.executeUpdate();
    }
  }

  @Override
  public void passWakeup(String name, String goneWaiterId) {
    local.remove(goneWaiterId);
    db.call("pass a wake-up on '" + name + "'", c -> {
      if (notifies()) {
        removeWaiter(c, LOCK, name, goneWaiterId);
      }
      Row row = read(c, LOCK, name);
      if (row == null || row.owner == null || row.remaining <= 0) {
        wakeNext(c, LOCK, name, 1);
      }
      return null;
    }, null);
  }

  // ------------------------------------------------------------------ local hand-off (PostgreSQL)

  /** PostgreSQL only: elsewhere other clients poll, and a run of hand-offs could keep them out unseen. */
  @Override
  public boolean handsOffLocally() {
    return notifies();
  }

  /** PostgreSQL: {@link PgRelease#releaseAndHandOff}; elsewhere a plain release. */
  @Override
  public CompletionStage<HandOffReply> releaseAndHandOff(String name, String owner, String nextOwner,
      long nextLeaseMillis, String nextWaiterId) {
    if (!notifies()) {
      return release(name, owner, true).thenApply(left -> new HandOffReply(left >= 0, null));
    }
    return pgRelease.releaseAndHandOff(name, owner, nextOwner, nextLeaseMillis, nextWaiterId);
  }

  // ------------------------------------------------------------------ operators' functions (JdbcOperators)

  @Override
  public CompletionStage<Optional<LockInfo>> inspect(String name) {
    return operators.inspect(name);
  }

  @Override
  public CompletionStage<Boolean> forceUnlock(String name) {
    return operators.forceUnlock(name);
  }

  /** {@link JdbcOperators#purgeExpired}. */
  CompletableFuture<Integer> purgeExpired(Duration grace) {
    return operators.purgeExpired(grace);
  }

  // ------------------------------------------------------------------ helpers

  /** The lock row as read now. */
  record Row(String owner, int holds, long token, long remaining) {}

  Row read(Connection c, char kind, String name) throws SQLException {
    try (PreparedStatement ps = db.prepare(c, sql.read)) {
      bindKey(ps, 1, kind, name);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? new Row(rs.getString(1), rs.getInt(2), rs.getLong(3), rs.getLong(4)) : null;
      }
    }
  }

  /** Binds namespace, kind, name from {@code index}; returns the next index. */
  int bindKey(PreparedStatement ps, int index, char kind, String name) throws SQLException {
    ps.setString(index, namespace);
    ps.setString(index + 1, String.valueOf(kind));
    ps.setString(index + 2, name);
    return index + 3;
  }

  /** PostgreSQL waiters: woken by notification; re-check at the holder's expiry or the recheck interval. */
  long recheckMillis(long holderRemaining) {
    long cap = settings.waiterRecheck().toMillis();
    return holderRemaining < 0 ? cap : Math.max(1, Math.min(cap, holderRemaining + 1));
  }

  long pollMillis(int attempts, long holderRemaining) {
    return LocalWaiters.pollDelay(attempts, settings.pollMin().toMillis(), settings.pollMax().toMillis(),
        holderRemaining);
  }

  /** A registration outlives three re-check intervals: a live waiter renews it at every attempt. */
  long waiterTtlMillis() {
    return settings.waiterRecheck().toMillis() * 3;
  }
}
