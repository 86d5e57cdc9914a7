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

  /**
   * ns, kind, name → owner, holds, token, lease end, the database's now; locks the row until commit. The
   * attempt decides on that one reading of the clock (bound into {@link #dropExpired}, {@link #head} and
   * {@link #refresh}): PostgreSQL's and MariaDB's clocks move between the statements of a transaction, and
   * a place expiring between them would be neither dropped nor kept.
   */
  final String lockRow;
  /** owner, token, lease ms, ns, kind, name: the grant (hold count 1). */
  final String setHolder;
  /** ns, kind, name, now: drops the places that expired. */
  final String dropExpired;
  /** ns, kind, name, now → waiter id, channel, its place's end: the head of the queue, if any. */
  final String head;
  /** ns, kind, name → waiter id, channel: the head of the queue by the clock now, if any (for wake-ups). */
  final String headNow;
  /** ns, kind, name → the latest place (null if none), the database's now. */
  final String tail;
  /** place ms, ns, kind, name, waiter id, now: keeps a place live at now (its arrival stays). */
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
    lockRow = "SELECT owner, holds, token, expires_at, " + now + " FROM " + t + " WHERE " + KEY + " FOR UPDATE";
    setHolder = "UPDATE " + t + " SET owner = ?, holds = 1, token = ?, expires_at = " + now + " + ? WHERE " + KEY;
    dropExpired = "DELETE FROM " + w + " WHERE " + KEY + " AND expires_at <= ?";
    head = "SELECT waiter_id, channel, expires_at FROM " + w + " WHERE " + KEY + " AND expires_at > ?"
        + " ORDER BY since, waiter_id LIMIT 1";
    headNow = "SELECT waiter_id, channel FROM " + w + " WHERE " + KEY + " AND expires_at > " + now
        + " ORDER BY since, waiter_id LIMIT 1";
    tail = "SELECT MAX(since), " + now + " FROM " + w + " WHERE " + KEY;
    refresh = "UPDATE " + w + " SET expires_at = " + now + " + ? WHERE " + KEY
        + " AND waiter_id = ? AND expires_at > ?";
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
