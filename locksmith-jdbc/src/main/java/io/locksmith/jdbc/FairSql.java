package io.locksmith.jdbc;

/**
 * The fair lock's own statements ({@link JdbcFairOps}), built once per client from the dialect's {@link
 * Sql}: its lock row is a row of the lock table of kind {@code F}, its queue the rows of the waiters table
 * of the same kind. Every time in them is the database clock ({@link Sql#now}). Parameters are listed
 * before each statement. Immutable.
 */
final class FairSql {
  /** ns, kind, name: a row's key. */
  private static final String KEY = "namespace = ? AND kind = ? AND lock_name = ?";

  /** ns, kind, name → owner, holds, token, ms left (may be negative); locks the row until commit. */
  final String lockRow;
  /** owner, token, lease ms, ns, kind, name: the grant (hold count 1). */
  final String setHolder;
  /** ns, kind, name: drops the places that expired. */
  final String dropExpired;
  /** ns, kind, name → waiter id, channel, ms its place has left: the head of the queue, if any. */
  final String head;
  /** ns, kind, name → the latest place (null if none), the database's now. */
  final String tail;
  /** place ms, ns, kind, name, waiter id: keeps a live place (its arrival stays). */
  final String refresh;
  /** ns, kind, name, waiter id, channel, since, place ms: a new place at the back. */
  final String enqueue;
  /** ns, kind, name, waiter id. */
  final String leave;
  /** ns, kind, name → live places. */
  final String count;
  /** ns → names of held fair locks. */
  final String listHeld;
  /** ns → names of fair locks with a live place (for those with a free lock and a queue). */
  final String listQueued;
  /** ns, grace ms: fair lock rows idle for the grace, with no live place. */
  final String purgeRows;
  /** ns: expired places (all kinds; on PostgreSQL the backend's own purge does it). */
  final String purgePlaces;

  FairSql(Sql sql) {
    String t = sql.table;
    String w = sql.waitersTable;
    String now = sql.now;
    lockRow = "SELECT owner, holds, token, expires_at - " + now + " FROM " + t + " WHERE " + KEY + " FOR UPDATE";
    setHolder = "UPDATE " + t + " SET owner = ?, holds = 1, token = ?, expires_at = " + now + " + ? WHERE " + KEY;
    dropExpired = "DELETE FROM " + w + " WHERE " + KEY + " AND expires_at <= " + now;
    head = "SELECT waiter_id, channel, expires_at - " + now + " FROM " + w + " WHERE " + KEY + " AND expires_at > "
        + now + " ORDER BY since, waiter_id LIMIT 1";
    tail = "SELECT MAX(since), " + now + " FROM " + w + " WHERE " + KEY;
    refresh = "UPDATE " + w + " SET expires_at = " + now + " + ? WHERE " + KEY + " AND waiter_id = ? AND expires_at > "
        + now;
    enqueue = "INSERT INTO " + w + " (namespace, kind, lock_name, waiter_id, channel, since, expires_at)"
        + " VALUES (?, ?, ?, ?, ?, ?, " + now + " + ?)";
    leave = "DELETE FROM " + w + " WHERE " + KEY + " AND waiter_id = ?";
    count = "SELECT COUNT(*) FROM " + w + " WHERE " + KEY + " AND expires_at > " + now;
    listHeld = "SELECT lock_name FROM " + t + " WHERE namespace = ? AND kind = 'F' AND owner IS NOT NULL"
        + " AND expires_at > " + now + " ORDER BY lock_name";
    listQueued = "SELECT DISTINCT lock_name FROM " + w + " WHERE namespace = ? AND kind = 'F' AND expires_at > "
        + now + " ORDER BY lock_name";
    purgeRows = "DELETE FROM " + t + " WHERE namespace = ? AND kind = 'F' AND expires_at < " + now + " - ?"
        + " AND NOT EXISTS (SELECT 1 FROM " + w + " x WHERE x.namespace = " + t + ".namespace AND x.kind = 'F'"
        + " AND x.lock_name = " + t + ".lock_name AND x.expires_at > " + now + ")";
    purgePlaces = "DELETE FROM " + w + " WHERE namespace = ? AND expires_at <= " + now;
  }
}
