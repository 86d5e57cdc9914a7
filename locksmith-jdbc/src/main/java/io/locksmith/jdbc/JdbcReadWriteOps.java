package io.locksmith.jdbc;

import static io.locksmith.jdbc.ReadWriteSql.READER;
import static io.locksmith.jdbc.ReadWriteSql.WAITING_READER;
import static io.locksmith.jdbc.ReadWriteSql.WAITING_WRITER;
import static io.locksmith.jdbc.ReadWriteSql.WRITER;

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
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The read-write lock of the JDBC backend (lease mode): its two sides ({@link #read()}, {@link #write()})
 * over the connections of one {@link JdbcBackend}.
 *
 * <p>The writer is the lock table's row of kind {@code W}, laid out as an exclusive lock's row (owner,
 * hold count, token, lease end by the database clock); it stays after a release, keeping the last write
 * token. Each reader is a row of {@code <table>_rw} with its own hold count, token and lease end, so a
 * crashed reader blocks writers for its remaining lease at most; waiting readers and writers are rows
 * there too, each with a registration that ends unless its waiter comes back ({@link #REGISTRATION_MARGIN}
 * after its backstop), so a dead waiter's place expires. Every operation that changes a lock runs in one
 * short READ COMMITTED transaction that first locks the writer's row ({@code SELECT … FOR UPDATE}), reads
 * the database clock there once, drops the members that ended and decides on what is left: one lock's
 * operations are serialized, different locks' are not.
 *
 * <p>Admission is phase-fair, as on Redis and ZooKeeper. A waiting reader holds a ticket: the token of
 * the write phase whose end it waits for (the holding writer's, or the last write token + 1 when it was
 * refused because writers wait, so it queues behind the next one; every later write token is larger).
 * Once no writer holds and its ticket is at or below the last write token, the reader is due: it enters
 * even while writers wait, and no writer is granted while a due reader is registered. Readers get the
 * token of the last write phase (a downgrade: the write grant's); writers draw theirs from the token
 * sequence, never at or below the row's last one.
 *
 * <p>Wake-ups: a change that lets somebody in wakes the due readers (all of them) or else, once no reader
 * holds, the oldest waiting writer: this client's waiters directly, another client's on PostgreSQL by
 * {@code pg_notify} on its channel (kind letter {@code R} or {@code W}, so that a wake-up whose waiter is
 * gone is passed on by the right side); on MariaDB and H2 other clients' waiters poll with the backend's
 * backoff. Thread-safe: it holds no mutable state of its own.
 */
final class JdbcReadWriteOps {
  private static final Logger log = LoggerFactory.getLogger(JdbcReadWriteOps.class);
  /** How long a registration outlives its waiter's backstop: a waiter late by less keeps its place. */
  static final long REGISTRATION_MARGIN = 2000;

  private final JdbcBackend backend;
  private final Db db;
  final ReadWriteSql sql;
  private final Side read = new Side(false);
  private final Side write = new Side(true);

  JdbcReadWriteOps(JdbcBackend backend) {
    this.backend = backend;
    this.db = backend.db;
    this.sql = new ReadWriteSql(backend.sql);
  }

  /** @return the shared side; one instance, so that the core batches its renewals together */
  LockOps read() {
    return read;
  }

  /** @return the exclusive side */
  LockOps write() {
    return write;
  }

  /** @return the side whose wake-ups carry {@code kind} ({@code R} or {@code W}) */
  LockOps side(char kind) {
    return kind == READER ? read : write;
  }

  // ------------------------------------------------------------------ state of one lock

  /** The writer's row as locked (or read), with the database's time of that read. */
  private record Anchor(String owner, int holds, long token, long expiresAt, long now) {
    boolean held() {
      return owner != null && expiresAt > now;
    }

    boolean heldBy(String o) {
      return held() && owner.equals(o);
    }
  }

  /** A row of {@code <table>_rw}. */
  private record Member(String id, char kind, int holds, long token, long ticket, String channel, long since,
      long expiresAt) {}

  /** A waiter to wake once the transaction committed. */
  private record Wake(char kind, String waiterId, String channel) {}

  /** What a transaction decided: its reply and the wake-ups it owes. */
  private record Outcome<T>(T reply, List<Wake> wakes) {}

  private Anchor anchor(Connection c, String statement, String name) throws SQLException {
    try (PreparedStatement ps = db.prepare(c, statement)) {
      ps.setString(1, backend.namespace);
      ps.setString(2, name);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return null;
        }
        return new Anchor(rs.getString(1), rs.getInt(2), rs.getLong(3), rs.getLong(4), rs.getLong(5));
      }
    }
  }

  /**
   * Locks the writer's row, creating it (free, token 0) first if the name has none, and ends a write hold
   * whose lease ran out (its owner cleared).
   */
  private Anchor lockAnchor(Connection c, String name) throws SQLException {
    Anchor a = anchor(c, sql.anchorLock, name);
    if (a == null) {
      try (PreparedStatement ps = db.prepare(c, backend.sql.metaEnsure)) {
        backend.bindKey(ps, 1, WRITER, name);
        ps.setNull(4, Types.INTEGER);
        ps.executeUpdate();
      }
      a = anchor(c, sql.anchorLock, name);
      if (a == null) {
        throw new Db.Retry("the read-write lock's row of '" + name + "' vanished");
      }
    }
    if (a.owner() != null && !a.held()) {
      // a write lease that ran out ends for good: readers may enter now, and the owner left on the row
      // would let that writer renew or re-enter should the database clock step back (the exclusive and
      // fair locks overwrite theirs at every grant; here readers are granted without touching the row)
      setWriter(c, name, null, 0, a.token(), a.expiresAt());
      a = new Anchor(null, 0, a.token(), a.expiresAt(), a.now());
    }
    return a;
  }

  /** Drops the members that ended, then reads the others (under the anchor's lock). */
  private List<Member> members(Connection c, String name, long now) throws SQLException {
    try (PreparedStatement ps = db.prepare(c, sql.membersExpire)) {
      bind(ps, name);
      ps.setLong(3, now);
      ps.executeUpdate();
    }
    return liveMembers(c, name, now);
  }

  private List<Member> liveMembers(Connection c, String name, long now) throws SQLException {
    List<Member> out = new ArrayList<>();
    try (PreparedStatement ps = db.prepare(c, sql.members)) {
      bind(ps, name);
      ps.setLong(3, now);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(new Member(rs.getString(1), rs.getString(2).charAt(0), rs.getInt(3), rs.getLong(4), rs.getLong(5),
              rs.getString(6), rs.getLong(7), rs.getLong(8)));
        }
      }
    }
    return out;
  }

  private static Member find(List<Member> members, String id, char kind) {
    if (id == null) {
      return null;
    }
    for (Member m : members) {
      if (m.kind() == kind && m.id().equals(id)) {
        return m;
      }
    }
    return null;
  }

  private static List<Member> ofKind(List<Member> members, char kind) {
    return members.stream().filter(m -> m.kind() == kind).toList();
  }

  private void setWriter(Connection c, String name, String owner, int holds, long token, long expiresAt)
      throws SQLException {
    try (PreparedStatement ps = db.prepare(c, sql.writerSet)) {
      ps.setString(1, owner);
      ps.setInt(2, holds);
      ps.setLong(3, token);
      ps.setLong(4, expiresAt);
      ps.setString(5, backend.namespace);
      ps.setString(6, name);
      ps.executeUpdate();
    }
  }

  private void insertMember(Connection c, String name, String id, char kind, int holds, long token, long ticket,
      long since, long expiresAt) throws SQLException {
    try (PreparedStatement ps = db.prepare(c, sql.memberInsert)) {
      bind(ps, name);
      ps.setString(3, id);
      ps.setString(4, String.valueOf(kind));
      ps.setInt(5, holds);
      ps.setLong(6, token);
      ps.setLong(7, ticket);
      ps.setString(8, backend.channel);
      ps.setLong(9, since);
      ps.setLong(10, expiresAt);
      ps.executeUpdate();
    }
  }

  private void updateMember(Connection c, String name, Member m, int holds, long token, long ticket, long expiresAt)
      throws SQLException {
    try (PreparedStatement ps = db.prepare(c, sql.memberUpdate)) {
      ps.setInt(1, holds);
      ps.setLong(2, token);
      ps.setLong(3, ticket);
      ps.setLong(4, expiresAt);
      ps.setString(5, backend.namespace);
      ps.setString(6, name);
      ps.setString(7, m.id());
      ps.setString(8, String.valueOf(m.kind()));
      ps.executeUpdate();
    }
  }

  private void deleteMember(Connection c, String name, String id, char kind) throws SQLException {
    try (PreparedStatement ps = db.prepare(c, sql.memberDelete)) {
      bind(ps, name);
      ps.setString(3, id);
      ps.setString(4, String.valueOf(kind));
      ps.executeUpdate();
    }
  }

  private void bind(PreparedStatement ps, String name) throws SQLException {
    ps.setString(1, backend.namespace);
    ps.setString(2, name);
  }

  /** Binds namespace, name and member from parameter {@code i} on. */
  private void bind(PreparedStatement ps, int i, String name, String member) throws SQLException {
    ps.setString(i, backend.namespace);
    ps.setString(i + 1, name);
    ps.setString(i + 2, member);
  }

  // ------------------------------------------------------------------ admission

  /** Registers (or refreshes) a waiter; a waiting reader keeps its first ticket, hence its place. */
  private void register(Connection c, String name, List<Member> members, String waiterId, char kind, long ticket,
      long now, long retry) throws SQLException {
    long until = now + retry + REGISTRATION_MARGIN;
    Member old = find(members, waiterId, kind);
    if (old != null) {
      updateMember(c, name, old, 0, 0, old.ticket(), until);
    } else {
      insertMember(c, name, waiterId, kind, 0, 0, ticket, now, until);
    }
  }

  /** The backstop of a refused waiter: the notification's recheck on PostgreSQL, else the poll's backoff. */
  private long backstop(char kind, String name, String waiterId, long holderRemaining) {
    int attempts = backend.local.refused(kind, name, waiterId);
    return backend.notifies() ? backend.recheckMillis(holderRemaining)
        : backend.pollMillis(attempts, holderRemaining);
  }

  /**
   * Marks as woken (ticket 0) and collects the waiting readers that may enter now and were not woken
   * yet: while writers wait, those whose write phase has ended; else every waiting reader. Only while no
   * writer holds.
   */
  private void wakeReaders(Connection c, String name, List<Member> members, boolean writersWaiting, long lastToken,
      String except, List<Wake> wakes) throws SQLException {
    for (Member m : members) {
      if (m.kind() == WAITING_READER && m.ticket() >= 1 && (!writersWaiting || m.ticket() <= lastToken)
          && !m.id().equals(except)) {
        updateMember(c, name, m, 0, 0, 0, m.expiresAt());
        wakes.add(new Wake(READER, m.id(), m.channel()));
      }
    }
  }

  /**
   * After the lock changed: wakes whoever may enter now. A writer holds: nobody. Otherwise the readers
   * that may enter; while any due reader has not entered, no writer; then, once no reader holds either,
   * the oldest waiting writer (it stays registered, keeping new readers out until it comes).
   */
  private void wakeNext(Connection c, String name, Anchor a, List<Wake> wakes) throws SQLException {
    if (a.held()) {
      return;
    }
    List<Member> members = liveMembers(c, name, a.now());
    List<Member> writers = ofKind(members, WAITING_WRITER);
    wakeReaders(c, name, members, !writers.isEmpty(), a.token(), null, wakes);
    if (writers.isEmpty()) {
      return;
    }
    boolean dueReader = members.stream().anyMatch(m -> m.kind() == WAITING_READER && m.ticket() <= a.token());
    if (dueReader || members.stream().anyMatch(m -> m.kind() == READER)) {
      return;
    }
    Member head = writers.stream().min(Comparator.comparingLong(Member::since).thenComparing(Member::id)).get();
    wakes.add(new Wake(WRITER, head.id(), head.channel()));
  }

  private AcquireReply acquireWrite(Connection c, String name, String owner, long leaseMillis, AcquireMode mode,
      String waiterId, List<Wake> wakes) throws SQLException {
    Anchor a = lockAnchor(c, name);
    long now = a.now();
    List<Member> members = members(c, name, now);
    if (a.heldBy(owner)) {
      // re-entry; or, for a new attempt, the hold an unanswered attempt of this acquisition left: one hold
      int holds = mode == AcquireMode.REENTER ? a.holds() + 1 : 1;
      setWriter(c, name, owner, holds, a.token(), Math.max(a.expiresAt(), now + leaseMillis));
      granted(c, name, waiterId, WAITING_WRITER);
      return AcquireReply.granted(a.token(), holds);
    }
    if (mode == AcquireMode.REENTER) {
      return AcquireReply.lostHold();
    }
    long remaining;
    if (a.held()) {
      remaining = a.expiresAt() - now;
    } else {
      List<Member> readers = ofKind(members, READER);
      List<Member> due = members.stream().filter(m -> m.kind() == WAITING_READER && m.ticket() <= a.token())
          .toList();
      if (!readers.isEmpty()) {
        remaining = readers.stream().mapToLong(Member::expiresAt).max().getAsLong() - now;
      } else if (!due.isEmpty()) {
        // readers that waited for the last write phase go first (phase-fair); wake those no release woke
        // (that writer's lease ran out). Backstop: the last of their registrations (if they died)
        wakeReaders(c, name, members, true, a.token(), null, wakes);
        remaining = due.stream().mapToLong(Member::expiresAt).max().getAsLong() - now;
      } else {
        long token;
        try (PreparedStatement ps = db.prepare(c, backend.sql.nextToken); ResultSet rs = ps.executeQuery()) {
          rs.next();
          token = rs.getLong(1);
        }
        // never at or below this name's last token, whatever happened to the sequence
        token = Math.max(token, a.token() + 1);
        setWriter(c, name, owner, 1, token, now + leaseMillis);
        granted(c, name, waiterId, WAITING_WRITER);
        return AcquireReply.granted(token, 1);
      }
    }
    if (waiterId == null) {
      return AcquireReply.busy(0);
    }
    long retry = backstop(WRITER, name, waiterId, remaining);
    register(c, name, members, waiterId, WAITING_WRITER, 0, now, retry);
    return AcquireReply.busy(retry);
  }

  private AcquireReply acquireRead(Connection c, String name, String owner, long leaseMillis, AcquireMode mode,
      String waiterId, List<Wake> wakes) throws SQLException {
    Anchor a = lockAnchor(c, name);
    long now = a.now();
    List<Member> members = members(c, name, now);
    Member mine = find(members, owner, READER);
    if (mine != null) {
      // re-entry, granted even while writers wait (a holder must not wait for a writer that waits for
      // it); for a new attempt, the hold an unanswered attempt of this acquisition left: one hold
      int holds = mode == AcquireMode.REENTER ? mine.holds() + 1 : 1;
      // the lease end grows from the row's value: a renewal may have committed since it was read
      try (PreparedStatement ps = db.prepare(c, sql.readerReenter)) {
        ps.setInt(1, holds);
        ps.setLong(2, now + leaseMillis);
        bind(ps, 3, name, owner);
        ps.executeUpdate();
      }
      granted(c, name, waiterId, WAITING_READER);
      return AcquireReply.granted(mine.token(), holds);
    }
    if (mode == AcquireMode.REENTER) {
      return AcquireReply.lostHold();
    }
    boolean writersWaiting = members.stream().anyMatch(m -> m.kind() == WAITING_WRITER);
    boolean enter;
    long ticket = 0;
    long remaining = -1;
    if (a.held()) {
      enter = a.owner().equals(owner); // a downgrade enters whoever waits, with the write grant's token
      remaining = a.expiresAt() - now;
      ticket = a.token();
    } else {
      Member waiting = find(members, waiterId, WAITING_READER);
      enter = !writersWaiting || (waiting != null && waiting.ticket() <= a.token());
      if (!enter) {
        // it came while writers wait: it queues behind the next one (writers do not starve); the
        // backstop is the last waiting writer's registration (if that writer dies silently)
        remaining = members.stream().filter(m -> m.kind() == WAITING_WRITER).mapToLong(Member::expiresAt).max()
            .getAsLong() - now;
        ticket = a.token() + 1;
      }
    }
    if (enter) {
      insertMember(c, name, owner, READER, 1, a.token(), 0, now, now + leaseMillis);
      granted(c, name, waiterId, WAITING_READER);
      if (!a.held()) {
        // readers may enter: let in the others that may and that no release woke
        wakeReaders(c, name, members, writersWaiting, a.token(), waiterId, wakes);
      }
      return AcquireReply.granted(a.token(), 1);
    }
    if (waiterId == null) {
      return AcquireReply.busy(0);
    }
    long retry = backstop(READER, name, waiterId, remaining);
    register(c, name, members, waiterId, WAITING_READER, ticket, now, retry);
    return AcquireReply.busy(retry);
  }

  private void granted(Connection c, String name, String waiterId, char kind) throws SQLException {
    if (waiterId != null) {
      backend.local.remove(waiterId);
      deleteMember(c, name, waiterId, kind);
    }
  }

  // ------------------------------------------------------------------ running the work

  @FunctionalInterface
  private interface TxWork<T> {
    T run(Connection c, List<Wake> wakes) throws SQLException;
  }

  /** Runs {@code work} in one transaction, then (committed) sends the wake-ups it decided. */
  private <T> Db.Work<T> tx(String name, TxWork<T> work) {
    return c -> {
      Outcome<T> out = Db.inTransaction(c, () -> {
        List<Wake> wakes = new ArrayList<>();
        T reply = work.run(c, wakes);
        c.commit();
        return new Outcome<>(reply, wakes);
      });
      send(c, name, out.wakes());
      return out.reply();
    };
  }

  /**
   * This client's waiters are woken directly (a gone one's wake-up is passed on); another client's on
   * PostgreSQL through its channel; on MariaDB and H2 they poll. Best effort: a failure costs a waiter
   * one backstop, never a wrong grant.
   */
  private void send(Connection c, String name, List<Wake> wakes) {
    for (Wake w : wakes) {
      if (backend.channel.equals(w.channel())) {
        backend.local.remove(w.waiterId());
        if (!backend.sink.wake(name, w.waiterId())) {
          side(w.kind()).passWakeup(name, w.waiterId());
        }
      } else if (backend.notifies() && w.channel() != null) {
        try (PreparedStatement ps = db.prepare(c, "SELECT pg_notify(?, ?)")) {
          ps.setString(1, w.channel());
          ps.setString(2, w.kind() + "\n" + w.waiterId() + "\n" + name);
          ps.executeQuery().close();
        } catch (SQLException e) {
          log.debug("could not wake waiter {} of '{}': {}", w.waiterId(), name, e.toString());
        }
      }
    }
  }

  // ------------------------------------------------------------------ the two sides

  /** One side of every read-write lock of this backend. */
  private final class Side implements LockOps {
    private final boolean writer;
    /** The kind letter of this side's holds and wake-ups ({@code W} or {@code R}). */
    private final char kind;

    Side(boolean writer) {
      this.writer = writer;
      this.kind = writer ? WRITER : READER;
    }

    private String what(String action, String name) {
      return action + " " + (writer ? "write" : "read") + " lock '" + name + "'";
    }

    @Override
    public CompletionStage<AcquireReply> acquire(String name, String owner, long leaseMillis, AcquireMode mode,
        String waiterId) {
      TxWork<AcquireReply> work = (c, wakes) -> writer
          ? acquireWrite(c, name, owner, leaseMillis, mode, waiterId, wakes)
          : acquireRead(c, name, owner, leaseMillis, mode, waiterId, wakes);
      if (mode == AcquireMode.REENTER) {
        return db.call(what("re-enter", name), tx(name, work), null);
      }
      LateGrants.Attempt attempt = backend.lateGrants.begin(LateGrants.key(kind, name, owner));
      return Db.conflictAsRefusal(db.call(what("acquire", name), tx(name, work), attempt.gate(),
          (reply, answered) -> backend.lateGrants.settled(attempt, reply != null && reply.granted(), answered,
              () -> giveBack(name, owner))), AcquireReply.busy(backend.pollMillis(0, -1)));
    }

    /** Gives back a grant whose reply came after its call timed out ({@link LateGrants}). */
    private CompletionStage<?> giveBack(String name, String owner) {
      CompletableFuture<Void> over = new CompletableFuture<>();
      db.call(what("give back", name), tx(name, (c, wakes) -> releaseWork(c, name, owner, true, wakes)), null,
          (left, answered) -> over.complete(null));
      return over;
    }

    @Override
    public CompletionStage<Integer> release(String name, String owner, boolean all) {
      CompletableFuture<Void> over = backend.lateGrants.releasing(LateGrants.key(kind, name, owner));
      return db.call(what("release", name), tx(name, (c, wakes) -> releaseWork(c, name, owner, all, wakes)), null,
          (left, answered) -> over.complete(null));
    }

    private int releaseWork(Connection c, String name, String owner, boolean all, List<Wake> wakes)
        throws SQLException {
      Anchor a = lockAnchor(c, name);
      if (writer) {
        if (!a.heldBy(owner)) {
          wakeNext(c, name, a, wakes); // a write lease that ran out ended its phase all the same
          return -1;
        }
        if (!all && a.holds() > 1) {
          setWriter(c, name, owner, a.holds() - 1, a.token(), a.expiresAt());
          return a.holds() - 1;
        }
        setWriter(c, name, null, 0, a.token(), a.now());
        wakeNext(c, name, new Anchor(null, 0, a.token(), a.now(), a.now()), wakes);
        return 0;
      }
      Member mine = find(members(c, name, a.now()), owner, READER);
      if (mine == null) {
        return -1;
      }
      if (!all && mine.holds() > 1) {
        // the hold count only (this owner's, changed under the anchor's lock); not the lease end read
        // above, which a renewal (not under the anchor's lock) may have moved since
        try (PreparedStatement ps = db.prepare(c, sql.readerRelease)) {
          bind(ps, 1, name, owner);
          ps.executeUpdate();
        }
        return mine.holds() - 1;
      }
      deleteMember(c, name, owner, READER);
      wakeNext(c, name, a, wakes);
      return 0;
    }

    @Override
    public CompletionStage<List<Boolean>> renew(List<RenewRequest> requests) {
      return db.call("renew " + requests.size() + " " + (writer ? "write" : "read") + " lease(s)",
          c -> backend.renewRows(c, writer ? sql.writerRenew : sql.readerRenew, requests, false), null);
    }

    @Override
    public void cancelWait(String name, String waiterId) {
      backend.local.remove(waiterId);
      db.call(what("stop waiting for", name), tx(name, (c, wakes) -> {
        Anchor a = lockAnchor(c, name);
        Member m = find(members(c, name, a.now()), waiterId, writer ? WAITING_WRITER : WAITING_READER);
        if (m != null) {
          deleteMember(c, name, waiterId, m.kind());
          // a writer that leaves may let readers in; a due reader that leaves may let the next writer in
          if (m.kind() == WAITING_WRITER || m.ticket() <= a.token()) {
            wakeNext(c, name, a, wakes);
          }
        }
        return null;
      }), null);
    }

    @Override
    public void passWakeup(String name, String goneWaiterId) {
      backend.local.remove(goneWaiterId);
      db.call(what("pass a wake-up for", name), tx(name, (c, wakes) -> {
        Anchor a = lockAnchor(c, name);
        members(c, name, a.now());
        deleteMember(c, name, goneWaiterId, writer ? WAITING_WRITER : WAITING_READER);
        wakeNext(c, name, a, wakes);
        return null;
      }), null);
    }

    /**
     * The writer; or, for the read side, the reader whose lease ends last, with the read holds of all
     * readers and that reader's token and remaining lease. Waiters: writers and readers waiting.
     */
    @Override
    public CompletionStage<Optional<LockInfo>> inspect(String name) {
      return db.call(what("inspect", name), c -> {
        Anchor a = anchor(c, sql.anchorRead, name);
        if (a == null) {
          return Optional.<LockInfo>empty();
        }
        List<Member> members = liveMembers(c, name, a.now());
        int waiters = (int) members.stream().filter(m -> m.kind() != READER).count();
        if (writer) {
          return a.held() ? Optional.of(new LockInfo(name, a.owner(), a.holds(), a.token(),
              Duration.ofMillis(a.expiresAt() - a.now()), waiters)) : Optional.<LockInfo>empty();
        }
        List<Member> readers = ofKind(members, READER);
        if (readers.isEmpty()) {
          return Optional.<LockInfo>empty();
        }
        Member last = readers.stream().max(Comparator.comparingLong(Member::expiresAt)).get();
        int holds = readers.stream().mapToInt(Member::holds).sum();
        return Optional.of(new LockInfo(name, last.id(), holds, last.token(),
            Duration.ofMillis(last.expiresAt() - a.now()), waiters));
      }, null);
    }

    /** Removes the writer, or every reader; tells each evicted holder and wakes whoever may enter. */
    @Override
    public CompletionStage<Boolean> forceUnlock(String name) {
      return db.call(what("force-unlock", name), c -> {
        List<String> evicted = new ArrayList<>();
        tx(name, (c2, wakes) -> {
          Anchor a = lockAnchor(c2, name);
          if (writer) {
            if (a.held()) {
              evicted.add(a.owner());
              setWriter(c2, name, null, 0, a.token(), a.now());
              a = new Anchor(null, 0, a.token(), a.now(), a.now());
            }
          } else {
            for (Member m : ofKind(members(c2, name, a.now()), READER)) {
              evicted.add(m.id());
            }
            try (PreparedStatement ps = db.prepare(c2, sql.membersDeleteKind)) {
              bind(ps, name);
              ps.setString(3, String.valueOf(READER));
              ps.executeUpdate();
            }
          }
          if (!evicted.isEmpty()) {
            wakeNext(c2, name, a, wakes);
          }
          return null;
        }).run(c);
        backend.operators.tellEvicted(c, kind, name, evicted);
        return !evicted.isEmpty();
      }, null);
    }

    @Override
    public String toString() {
      return "JdbcReadWriteOps[" + (writer ? "write" : "read") + "]";
    }
  }
}
