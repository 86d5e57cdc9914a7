package io.locksmith.jdbc;

import static io.locksmith.jdbc.JdbcBackend.SEMAPHORE;

import io.locksmith.LockInfo;
import io.locksmith.PermitHolder;
import io.locksmith.SemaphoreInfo;
import io.locksmith.SemaphoreState;
import io.locksmith.spi.AcquireMode;
import io.locksmith.spi.AcquireReply;
import io.locksmith.spi.RenewRequest;
import io.locksmith.spi.SemaphoreOps;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A semaphore of leased permits: a meta row in the lock table (kind {@code S}) holds the stored permit
 * count, and each permit is a row of the permits table with its owner, token and expiry by the database
 * clock. Taking a permit locks the meta row ({@code SELECT … FOR UPDATE}) in a short READ COMMITTED
 * transaction, so that counting the unexpired permits and inserting one cannot interleave with another
 * client's; releasing one takes the same lock, so that on PostgreSQL a waiter registered by a concurrent
 * refusal is visible to the wake-up that follows the release. {@link #inspect} reports the holder of
 * the newest grant. Thread-safe.
 */
final class JdbcSemaphoreOps implements SemaphoreOps {
  private final JdbcBackend backend;
  private final Sql sql;
  private final Db db;
  private final int declaredPermits;

  JdbcSemaphoreOps(JdbcBackend backend, int declaredPermits) {
    this.backend = backend;
    this.sql = backend.sql;
    this.db = backend.db;
    this.declaredPermits = declaredPermits;
  }

  @Override
  public CompletionStage<AcquireReply> acquire(String name, String owner, long leaseMillis, AcquireMode mode,
      String waiterId) {
    if (mode == AcquireMode.REENTER) {
      return CompletableFuture.completedFuture(AcquireReply.lostHold()); // permits are not re-entrant
    }
    LateGrants.Attempt attempt = backend.lateGrants.begin(LateGrants.key(SEMAPHORE, name, owner));
    return Db.conflictAsRefusal(db.call("take a permit of '" + name + "'", c -> Db.inTransaction(c, () -> take(c,
        name, owner, leaseMillis, waiterId)), attempt.gate(), (reply, answered) -> backend.lateGrants.settled(attempt,
            reply != null && reply.granted(), answered, () -> giveBack(name, owner))),
        AcquireReply.busy(backend.pollMillis(0, -1)));
  }

  /** Returns a permit granted after its call timed out that no later attempt holds ({@link LateGrants}). */
  private CompletionStage<?> giveBack(String name, String owner) {
    CompletableFuture<Void> over = new CompletableFuture<>();
    db.call("give back a permit of '" + name + "'", releaseWork(name, owner), null,
        (left, answered) -> over.complete(null));
    return over;
  }

  private AcquireReply take(Connection c, String name, String owner, long leaseMillis, String waiterId)
      throws SQLException {
    int permits = lockMeta(c, name);
    try (PreparedStatement ps = db.prepare(c, sql.permitsExpire)) {
      bindName(ps, 1, name);
      ps.executeUpdate();
    }
    try (PreparedStatement ps = db.prepare(c, sql.permitMine)) {
      bindName(ps, 1, name);
      ps.setString(3, owner);
      try (ResultSet rs = ps.executeQuery()) {
        if (rs.next()) { // a grant of this same acquisition whose reply was lost
          granted(c, name, waiterId);
          return AcquireReply.granted(rs.getLong(1), 1);
        }
      }
    }
    int taken;
    long firstExpiry;
    try (PreparedStatement ps = db.prepare(c, sql.permitsCount)) {
      bindName(ps, 1, name);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        taken = rs.getInt(1);
        long remaining = rs.getLong(2);
        firstExpiry = rs.wasNull() ? -1 : remaining;
      }
    }
    if (taken < permits) {
      long token;
      try (PreparedStatement ps = db.prepare(c, sql.nextToken); ResultSet rs = ps.executeQuery()) {
        rs.next();
        token = rs.getLong(1);
      }
      try (PreparedStatement ps = db.prepare(c, sql.permitInsert)) {
        bindName(ps, 1, name);
        ps.setString(3, owner);
        ps.setLong(4, token);
        ps.setLong(5, leaseMillis);
        ps.executeUpdate();
      }
      granted(c, name, waiterId);
      c.commit();
      return AcquireReply.granted(token, 1);
    }
    if (waiterId == null) {
      return AcquireReply.busy(0);
    }
    int attempts = backend.local.refused(SEMAPHORE, name, waiterId);
    if (backend.notifies()) {
      try (PreparedStatement ps = db.prepare(c, sql.waiterRegister)) {
        int i = backend.bindKey(ps, 1, SEMAPHORE, name);
        ps.setString(i++, waiterId);
        ps.setString(i++, backend.channel);
        ps.setLong(i, backend.waiterTtlMillis());
        ps.executeUpdate();
      }
      c.commit();
      return AcquireReply.busy(backend.recheckMillis(firstExpiry));
    }
    return AcquireReply.busy(backend.pollMillis(attempts, firstExpiry));
  }

  private void granted(Connection c, String name, String waiterId) throws SQLException {
    if (waiterId != null) {
      backend.local.remove(waiterId);
      if (backend.notifies()) {
        backend.removeWaiter(c, SEMAPHORE, name, waiterId);
      }
    }
  }

  /** Locks the meta row, creating it with the declared count first if there is none; the count in force. */
  private int lockMeta(Connection c, String name) throws SQLException {
    Integer permits = selectPermits(c, sql.metaLock, name);
    if (permits == null) {
      try (PreparedStatement ps = db.prepare(c, sql.metaEnsure)) {
        backend.bindKey(ps, 1, SEMAPHORE, name);
        ps.setInt(4, declaredPermits);
        ps.executeUpdate();
      }
      permits = selectPermits(c, sql.metaLock, name);
      if (permits == null) {
        throw new Db.Retry("the semaphore's row of '" + name + "' vanished");
      }
    }
    return permits;
  }

  private Integer selectPermits(Connection c, String statement, String name) throws SQLException {
    try (PreparedStatement ps = db.prepare(c, statement)) {
      backend.bindKey(ps, 1, SEMAPHORE, name);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return null;
        }
        int p = rs.getInt(1);
        return rs.wasNull() ? declaredPermits : p;
      }
    }
  }

  /** The owner's release; the owner's next attempts wait for its work to be over ({@link LateGrants#releasing}). */
  @Override
  public CompletionStage<Integer> release(String name, String owner, boolean all) {
    CompletableFuture<Void> over = backend.lateGrants.releasing(LateGrants.key(SEMAPHORE, name, owner));
    return db.call("return a permit of '" + name + "'", releaseWork(name, owner), null,
        (left, answered) -> over.complete(null));
  }

  private Db.Work<Integer> releaseWork(String name, String owner) {
    return c -> {
      int n = Db.inTransaction(c, () -> {
        lockMeta(c, name);
        int valid;
        try (PreparedStatement ps = db.prepare(c, sql.permitRelease)) {
          bindName(ps, 1, name);
          ps.setString(3, owner);
          valid = ps.executeUpdate();
        }
        if (valid == 0) {
          try (PreparedStatement ps = db.prepare(c, sql.permitDrop)) { // an expired leftover
            bindName(ps, 1, name);
            ps.setString(3, owner);
            ps.executeUpdate();
          }
        }
        c.commit();
        return valid;
      });
      if (n > 0) {
        backend.wakeNext(c, SEMAPHORE, name, 1);
        return 0;
      }
      return -1;
    };
  }

  @Override
  public CompletionStage<List<Boolean>> renew(List<RenewRequest> requests) {
    return db.call("renew " + requests.size() + " permit(s)",
        c -> backend.renewRows(c, sql.permitRenew, requests, false), null);
  }

  @Override
  public void cancelWait(String name, String waiterId) {
    backend.local.remove(waiterId);
    if (backend.notifies()) {
      db.call("cancel a wait on '" + name + "'", c -> backend.removeWaiter(c, SEMAPHORE, name, waiterId), null);
    }
  }

  @Override
  public void passWakeup(String name, String goneWaiterId) {
    backend.local.remove(goneWaiterId);
    db.call("pass a wake-up on '" + name + "'", c -> {
      if (backend.notifies()) {
        backend.removeWaiter(c, SEMAPHORE, name, goneWaiterId);
      }
      SemaphoreInfo info = describe(c, name);
      backend.wakeNext(c, SEMAPHORE, name, Math.min(1, info.available()));
      return null;
    }, null);
  }

  @Override
  public CompletionStage<Optional<LockInfo>> inspect(String name) {
    return db.call("inspect '" + name + "'", c -> {
      try (PreparedStatement ps = db.prepare(c, sql.permitsList)) {
        bindName(ps, 1, name);
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next()) {
            return Optional.<LockInfo>empty();
          }
          return Optional.of(new LockInfo(name, rs.getString(1), 1, rs.getLong(2),
              Duration.ofMillis(Math.max(0, rs.getLong(3))), backend.operators.countWaiters(c, SEMAPHORE, name)));
        }
      }
    }, null);
  }

  @Override
  public CompletionStage<Boolean> forceUnlock(String name) {
    return db.call("force-unlock '" + name + "'", c -> {
      List<String> evicted = Db.inTransaction(c, () -> {
        lockMeta(c, name);
        List<String> owners = new java.util.ArrayList<>();
        try (PreparedStatement ps = db.prepare(c, sql.permitOwners)) {
          bindName(ps, 1, name);
          try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
              owners.add(rs.getString(1));
            }
          }
        }
        try (PreparedStatement ps = db.prepare(c, sql.permitsForce)) {
          bindName(ps, 1, name);
          ps.executeUpdate();
        }
        c.commit();
        return owners;
      });
      backend.operators.tellEvicted(c, SEMAPHORE, name, evicted);
      backend.wakeNext(c, SEMAPHORE, name, evicted.size());
      return !evicted.isEmpty();
    }, null);
  }

  @Override
  public CompletionStage<SemaphoreInfo> describe(String name) {
    return db.call("describe '" + name + "'", c -> describe(c, name), null);
  }

  private SemaphoreInfo describe(Connection c, String name) throws SQLException {
    Integer stored = selectPermits(c, sql.metaRead, name);
    return new SemaphoreInfo(name, stored == null ? declaredPermits : stored, taken(c, name),
        backend.operators.countWaiters(c, SEMAPHORE, name));
  }

  private int taken(Connection c, String name) throws SQLException {
    try (PreparedStatement ps = db.prepare(c, sql.permitsCount)) {
      bindName(ps, 1, name);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  /**
   * Reads the meta row's count without creating the row (a row whose count is null stores none), then
   * every unexpired permit row: its owner, token and the time left by the database clock.
   */
  @Override
  public CompletionStage<SemaphoreState> state(String name) {
    return db.call("inspect semaphore '" + name + "'", c -> {
      OptionalInt stored = OptionalInt.empty();
      try (PreparedStatement ps = db.prepare(c, sql.metaRead)) {
        backend.bindKey(ps, 1, SEMAPHORE, name);
        try (ResultSet rs = ps.executeQuery()) {
          if (rs.next()) {
            int p = rs.getInt(1);
            if (!rs.wasNull() && p > 0) {
              stored = OptionalInt.of(p);
            }
          }
        }
      }
      List<PermitHolder> holders = new ArrayList<>();
      try (PreparedStatement ps = db.prepare(c, sql.permitsList)) {
        bindName(ps, 1, name);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            holders.add(new PermitHolder(rs.getString(1), rs.getLong(2),
                Duration.ofMillis(Math.max(0, rs.getLong(3)))));
          }
        }
      }
      return new SemaphoreState(name, stored, holders, backend.operators.countWaiters(c, SEMAPHORE, name));
    }, null);
  }

  @Override
  public CompletionStage<Void> setPermits(String name, int permits) {
    if (permits < 1) {
      return CompletableFuture.failedFuture(new IllegalArgumentException("permits must be at least 1, was "
          + permits));
    }
    return db.call("set the permits of '" + name + "'", c -> {
      try (PreparedStatement ps = db.prepare(c, sql.metaSet)) {
        backend.bindKey(ps, 1, SEMAPHORE, name);
        ps.setInt(4, permits);
        ps.executeUpdate();
      }
      backend.wakeNext(c, SEMAPHORE, name, Math.max(0, permits - taken(c, name)));
      return null;
    }, null);
  }

  private void bindName(PreparedStatement ps, int index, String name) throws SQLException {
    ps.setString(index, backend.namespace);
    ps.setString(index + 1, name);
  }

}
