package io.locksmith.jdbc;

/**
 * The statements of the read-write lock ({@link JdbcReadWriteOps}) for one dialect and table. The writer
 * is the lock table's row of kind {@code W} (owner, hold count, token, lease end, like an exclusive
 * lock's row), which is also the lock's anchor: every operation that changes the lock locks it first.
 * Readers and waiters are rows of {@code <table>_rw}. Times are the database clock in ms since the epoch
 * ({@link Sql#now}); a transaction reads it once, with the anchor, and writes lease ends from that value,
 * so no application clock reaches the database. A reader's renewal does not lock the anchor, so no
 * transaction writes back a reader's lease end it read earlier: it may have been renewed since.
 * Parameters are listed before each statement. Immutable.
 */
final class ReadWriteSql {
  /** Kind of the writer's (anchor) row in the lock table. */
  static final char WRITER = 'W';
  /** Member kinds of {@code <table>_rw}. */
  static final char READER = 'R';
  static final char WAITING_READER = 'r';
  static final char WAITING_WRITER = 'w';

  final String table;
  /** ns, name → owner, holds, token, expires_at, now; locking the anchor (in a transaction). */
  final String anchorLock;
  /** ns, name → owner, holds, token, expires_at, now; not locking. */
  final String anchorRead;
  /** owner (or null), holds, token, expires_at, ns, name. */
  final String writerSet;
  /** lease ms, ns, name, owner: extends the write lease if still held. */
  final String writerRenew;
  /** ns, name, now: drops members whose lease or registration ended. */
  final String membersExpire;
  /** ns, name, now → member_id, member_kind, holds, token, ticket, channel, since, expires_at. */
  final String members;
  /** ns, name, member, kind, holds, token, ticket, channel, since, expires_at. */
  final String memberInsert;
  /** holds, token, ticket, expires_at, ns, name, member, kind. */
  final String memberUpdate;
  /**
   * holds, lease end, ns, name, member: a reader's re-entry. The lease end only grows, from the row's
   * current value, never from one read earlier in the transaction: a renewal ({@link #readerRenew}) does
   * not lock the anchor and may have committed since.
   */
  final String readerReenter;
  /** ns, name, member: a reader's partial release; its lease end is left alone (see {@link #readerReenter}). */
  final String readerRelease;
  /** ns, name, member, kind. */
  final String memberDelete;
  /** ns, name, kind. */
  final String membersDeleteKind;
  /** lease ms, ns, name, owner: extends a read lease if it has not ended. */
  final String readerRenew;
  /** ns → the names with a live writer, in name order. */
  final String listWriters;
  /** ns → the names with a live reader, in name order. */
  final String listReaders;
  /** ns → the names with a live waiting reader or writer, in name order. */
  final String listWaiting;
  /** ns, grace ms: members that ended longer ago than the grace. */
  final String purge;

  ReadWriteSql(Sql sql) {
    this.table = sql.table + "_rw";
    String t = sql.table;
    String now = sql.now;
    String anchorKey = " WHERE namespace = ? AND kind = '" + WRITER + "' AND lock_name = ?";
    String anchor = "SELECT owner, holds, token, expires_at, " + now + " FROM " + t + anchorKey;
    anchorLock = anchor + " FOR UPDATE";
    anchorRead = anchor;
    writerSet = "UPDATE " + t + " SET owner = ?, holds = ?, token = ?, expires_at = ?" + anchorKey;
    writerRenew = "UPDATE " + t + " SET expires_at = " + now + " + ?" + anchorKey + " AND owner = ? AND expires_at > "
        + now;
    String key = " WHERE namespace = ? AND lock_name = ?";
    membersExpire = "DELETE FROM " + table + key + " AND expires_at <= ?";
    members = "SELECT member_id, member_kind, holds, token, ticket, channel, since, expires_at FROM " + table + key
        + " AND expires_at > ?";
    memberInsert = "INSERT INTO " + table + " (namespace, lock_name, member_id, member_kind, holds, token, ticket,"
        + " channel, since, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    memberUpdate = "UPDATE " + table + " SET holds = ?, token = ?, ticket = ?, expires_at = ?" + key
        + " AND member_id = ? AND member_kind = ?";
    String reader = key + " AND member_id = ? AND member_kind = '" + READER + "'";
    readerReenter = "UPDATE " + table + " SET holds = ?, expires_at = GREATEST(expires_at, ?)" + reader;
    readerRelease = "UPDATE " + table + " SET holds = holds - 1" + reader;
    memberDelete = "DELETE FROM " + table + key + " AND member_id = ? AND member_kind = ?";
    membersDeleteKind = "DELETE FROM " + table + key + " AND member_kind = ?";
    readerRenew = "UPDATE " + table + " SET expires_at = " + now + " + ?" + key + " AND member_id = ? AND member_kind = '"
        + READER + "' AND expires_at > " + now;
    listWriters = "SELECT lock_name FROM " + t + " WHERE namespace = ? AND kind = '" + WRITER + "' AND owner IS NOT NULL"
        + " AND expires_at > " + now + " ORDER BY lock_name";
    listReaders = "SELECT DISTINCT lock_name FROM " + table + " WHERE namespace = ? AND member_kind = '" + READER
        + "' AND expires_at > " + now + " ORDER BY lock_name";
    listWaiting = "SELECT DISTINCT lock_name FROM " + table + " WHERE namespace = ? AND member_kind IN ('"
        + WAITING_READER + "', '" + WAITING_WRITER + "') AND expires_at > " + now + " ORDER BY lock_name";
    purge = "DELETE FROM " + table + " WHERE namespace = ? AND expires_at < " + now + " - ?";
  }

  /** A probe that fails unless the table has the expected columns. */
  String probe() {
    return "SELECT namespace, lock_name, member_id, member_kind, holds, token, ticket, channel, since, expires_at FROM "
        + table + " WHERE 1 = 0";
  }
}
