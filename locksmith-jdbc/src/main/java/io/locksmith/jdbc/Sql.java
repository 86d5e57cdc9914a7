package io.locksmith.jdbc;

/**
 * The statements of one dialect for one table, built once per client. Every time in them is the
 * database's clock in milliseconds since the epoch ({@link #now}); the application's clock never reaches
 * the database. Parameters are listed before each statement. Immutable.
 */
final class Sql {
  final JdbcDialect dialect;
  final String table;
  final String permitsTable;
  final String waitersTable;
  final String sequence;
  /** The database's current time in ms since the epoch. */
  final String now;

  /** ns, kind, name: the lock row's key. */
  private static final String KEY = "namespace = ? AND kind = ? AND lock_name = ?";

  /**
   * PostgreSQL: an exclusive lock's row uses its {@code permits} column (a semaphore's count, unused by a
   * lock) as its waiter mark: null until a waiter first registers for the lock, then 1 for good (until
   * the row is purged, long after its last lease). Every registration sets it in the statement that finds
   * the lock taken, under the row's lock. A release updates (and returns) the newest version of the row,
   * so it finds the mark whenever a waiter registered before the release took the row; one that finds
   * it null skips the wake-up query. Never clearing it keeps that simple: a snapshot that shows the mark
   * set is never stale, so a registration need not lock or write the row again to be sure of it.
   */
  static final String MARK = "permits";

  // ---------------------------------------------------------------- exclusive lock
  /**
   * Grant to a new owner if free or expired, or again to the same owner (hold count 1, its token). A new
   * owner's token is the sequence's value, but never at or below the row's token: a sequence set back
   * behind it (a restore, a {@code setval}) cannot make a name's tokens go backwards, whatever {@code
   * build()}'s check of the sequence missed:
   * ns, kind, name, owner, lease ms. PostgreSQL returns (token, holds) when granted; the others are
   * followed by {@link #read}.
   */
  final String grant;
  /**
   * PostgreSQL: {@link #grant} plus, when refused, the waiter's registration and the lock row's waiter
   * mark ({@link #MARK}), or, when granted, the removal of the waiter's registration: ns, kind, name,
   * owner, lease ms, ns, kind, name, waiter, channel, ttl ms, ns, kind, name, waiter, ns, kind, name (the
   * mark), ns, kind, name, ns, kind, name (is it marked). One row: token, holds (null if refused), the
   * holder's remaining ms, and, when refused, whether the row is marked (0: the row was not seen).
   */
  final String grantOrRegister;
  /** ns, kind, name → owner, holds, token, remaining ms. */
  final String read;
  /** lease ms, ns, kind, name, owner → (PostgreSQL) token, holds. */
  final String reenter;
  /** threshold x3 (holds at or below it are all dropped), ns, kind, name, owner → (PostgreSQL) holds. */
  final String release;
  /** lease ms, ns, kind, name, owner. */
  final String renew;
  /** ns, kind, name → owner, holds, token, remaining ms (held only). */
  final String inspect;
  /** ns, kind, name, owner: frees the row if {@code owner} still holds it. */
  final String forceUnlock;
  /** ns, kind, name → the holder, locking the row (in a transaction). */
  final String holderForUpdate;
  /** ns, grace ms. */
  final String purgeLocks;

  // ---------------------------------------------------------------- semaphore
  /** ns, kind, name → permits, locking the meta row. */
  final String metaLock;
  /** ns, kind, name → permits. */
  final String metaRead;
  /** ns, kind, name, permits: insert the meta row if missing. */
  final String metaEnsure;
  /**
   * ns, kind, name, permits: insert or overwrite the stored count, marking the row as set on purpose
   * ({@code holds = 1}, a column a meta row does not otherwise use) so that {@link #purgeSemaphores}
   * keeps it.
   */
  final String metaSet;
  /** ns, name. */
  final String permitsExpire;
  /** ns, name → taken, ms until the first permit expires. */
  final String permitsCount;
  /** ns, name, owner → token. */
  final String permitMine;
  /** → next token. */
  final String nextToken;
  /** ns, name, owner, token, lease ms. */
  final String permitInsert;
  /** ns, name, owner. */
  final String permitRelease;
  /** ns, name, owner (any expiry). */
  final String permitDrop;
  /** lease ms, ns, name, owner. */
  final String permitRenew;
  /** ns, name → owner, token, remaining ms, newest grant first. */
  final String permitsList;
  /** ns, name. */
  final String permitsForce;
  /** ns, name → the owners of the unexpired permits. */
  final String permitOwners;
  /** ns, grace ms. */
  final String purgePermits;
  /**
   * ns: deletes the meta rows of semaphores without a permit row whose count was not set by {@link
   * #metaSet} (created with the declared count by a take, recreated by the next one).
   */
  final String purgeSemaphores;

  // ---------------------------------------------------------------- PostgreSQL waiters
  /** ns, kind, name, waiter, channel, ttl ms. */
  final String waiterRegister;
  /** ns, kind, name, waiter. */
  final String waiterRemove;
  /** ns, kind, name, limit, ns, kind, name, kind, name → one row per woken waiter. */
  final String wake;
  /**
   * PostgreSQL: {@link #release} and, in the same round trip and implicit transaction, the wake-up of
   * the oldest waiter if the lock row is free afterwards: release's parameters, then ns, kind, name,
   * then {@link #wake}'s. The second statement takes its own snapshot after the first, so it sees every
   * waiter whose registration committed before the release took the row (a registration still in
   * flight waits for the row and then finds the lock free).
   */
  final String releaseAndWake;
  /**
   * PostgreSQL: {@link #release} that also returns the lock row's waiter mark ({@link #MARK}): threshold
   * x3, ns, kind, name, owner → holds, mark (null: no waiter ever registered for the lock).
   */
  final String releaseMarked;
  /**
   * PostgreSQL: {@link #wake} if the lock row is free now: ns, kind, name, ns, kind, name, limit, ns, kind,
   * name, kind, name → one row per woken waiter. After {@link #release} in {@link #releaseAndWake}; alone
   * after a {@link #releaseMarked} that found the row marked (its own transaction, after the release
   * committed, so it sees every registration that committed before the release took the row).
   */
  final String wakeIfFree;
  /**
   * PostgreSQL: a local hand-off ({@link LocalHandOff}): every hold of the releasing owner is dropped and,
   * in the same statement, the lock goes to the next owner with one hold, a new token (the sequence's
   * value, never at or below the row's) and a lease by the database clock; its waiter registration is
   * deleted. Only if the releasing owner still holds an unexpired lease: next owner, lease ms, ns, kind,
   * name, owner, ns, kind, name, next waiter → token (no row: nothing changed).
   */
  final String handOff;
  /**
   * PostgreSQL: the plain release that ends a run of hand-offs: {@link #release} of every hold, then, if
   * the lock row is free, the wake-up of the oldest registered waiter of another client (its channel is
   * not ours): threshold x3, ns, kind, name, owner, then ns, kind, name, ns, kind, name, our channel,
   * limit, ns, kind, name, kind, name → holds; then one row per woken waiter.
   */
  final String releaseAndWakeOther;
  /** ns, kind, name → count. */
  final String waitersCount;
  /** ns. */
  final String purgeWaiters;

  // ---------------------------------------------------------------- operators' walk (JdbcLockScan)
  /** ns → the names of the held exclusive locks, in name order. */
  final String listLocks;
  /** ns → the names of the semaphores with a live permit, in name order. */
  final String listSemaphores;
  /** PostgreSQL: ns → kind, name of each lock with a live waiter registration; else null. */
  final String listWaited;

  Sql(JdbcDialect dialect, String table) {
    this.dialect = dialect;
    this.table = table;
    this.permitsTable = table + "_permits";
    this.waitersTable = table + "_waiters";
    this.sequence = table + "_token";
    String t = table;
    String p = permitsTable;
    String w = waitersTable;
    switch (dialect) {
      case POSTGRESQL -> {
        now = "(FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000))::BIGINT";
        String next = "nextval('" + sequence + "')";
        grant = "INSERT INTO " + t + " AS l (namespace, kind, lock_name, owner, holds, token, expires_at)"
            + " VALUES (?, ?, ?, ?, 1, " + next + ", " + now + " + ?)"
            + " ON CONFLICT (namespace, kind, lock_name) DO UPDATE SET owner = EXCLUDED.owner, holds = 1,"
            + " token = CASE WHEN l.owner = EXCLUDED.owner AND l.expires_at > " + now + " THEN l.token"
            + " WHEN l.token < EXCLUDED.token THEN EXCLUDED.token ELSE GREATEST(" + next + ", l.token + 1) END,"
            + " expires_at = EXCLUDED.expires_at"
            + " WHERE l.owner IS NULL OR l.expires_at <= " + now + " OR l.owner = EXCLUDED.owner"
            + " RETURNING token, holds";
        // The waiter registers in the statement that finds the lock taken: a release commits after it
        // (it waits for this statement's row lock) and then finds the waiter, or before it, and then
        // this statement finds the lock free. No window for a lost wake-up.
        // The waiter mark (set once, never cleared, see MARK): m sets it only if this statement's snapshot
        // of the row shows it unset, so that a hot lock's refusals do not each write the row (a snapshot
        // that shows it set is right: it stays set). The statement misses the row only if another
        // transaction inserted it after the snapshot (the first use of a name, raced): then the last column
        // is 0 and the caller asks again at once.
        grantOrRegister = "WITH g AS (" + grant + "),"
            + " w AS (INSERT INTO " + w + " (namespace, kind, lock_name, waiter_id, channel, since, expires_at)"
            + " SELECT ?, ?, ?, ?, ?, " + now + ", " + now + " + ? WHERE NOT EXISTS (SELECT 1 FROM g)"
            + " ON CONFLICT (namespace, kind, lock_name, waiter_id) DO UPDATE SET expires_at = EXCLUDED.expires_at),"
            + " d AS (DELETE FROM " + w + " WHERE " + KEY + " AND waiter_id = ? AND EXISTS (SELECT 1 FROM g)),"
            + " m AS (UPDATE " + t + " SET " + MARK + " = 1 WHERE " + KEY + " AND " + MARK + " IS NULL"
            + " AND NOT EXISTS (SELECT 1 FROM g) RETURNING 1)"
            + " SELECT token, holds, CAST(NULL AS BIGINT), CAST(NULL AS BIGINT) FROM g"
            + " UNION ALL SELECT NULL, NULL, (SELECT h.expires_at - " + now + " FROM " + t + " h"
            + " WHERE h.namespace = ? AND h.kind = ? AND h.lock_name = ?), (SELECT COUNT(*) FROM m)"
            + " + (SELECT COUNT(*) FROM " + t + " k WHERE k.namespace = ? AND k.kind = ? AND k.lock_name = ?"
            + " AND k." + MARK + " IS NOT NULL)"
            + " WHERE NOT EXISTS (SELECT 1 FROM g)";
        reenter = "UPDATE " + t + " SET holds = holds + 1, expires_at = GREATEST(expires_at, " + now + " + ?)"
            + " WHERE " + KEY + " AND owner = ? AND expires_at > " + now + " RETURNING token, holds";
        release = releaseSql(t) + " RETURNING holds";
        metaEnsure = "INSERT INTO " + t + " (namespace, kind, lock_name, permits) VALUES (?, ?, ?, ?)"
            + " ON CONFLICT (namespace, kind, lock_name) DO NOTHING";
        metaSet = "INSERT INTO " + t + " (namespace, kind, lock_name, permits, holds) VALUES (?, ?, ?, ?, 1)"
            + " ON CONFLICT (namespace, kind, lock_name) DO UPDATE SET permits = EXCLUDED.permits, holds = 1";
        nextToken = "SELECT " + next;
        waiterRegister = "INSERT INTO " + w + " (namespace, kind, lock_name, waiter_id, channel, since, expires_at)"
            + " VALUES (?, ?, ?, ?, ?, " + now + ", " + now + " + ?)"
            + " ON CONFLICT (namespace, kind, lock_name, waiter_id) DO UPDATE SET expires_at = EXCLUDED.expires_at";
        waiterRemove = "DELETE FROM " + w + " WHERE " + KEY + " AND waiter_id = ?";
        // oldest registration first; SKIP LOCKED: two concurrent releases wake two different waiters
        wake = "WITH pick AS (SELECT waiter_id FROM " + w + " WHERE " + KEY + " AND expires_at > " + now
            + " ORDER BY since, waiter_id LIMIT ? FOR UPDATE SKIP LOCKED),"
            + " woken AS (DELETE FROM " + w + " x WHERE x.namespace = ? AND x.kind = ? AND x.lock_name = ?"
            + " AND x.waiter_id IN (SELECT waiter_id FROM pick) RETURNING x.waiter_id, x.channel)"
            + " SELECT pg_notify(channel, ? || chr(10) || waiter_id || chr(10) || ?) FROM woken";

        releaseMarked = releaseSql(t) + " RETURNING holds, " + MARK;
        wakeIfFree = wake.replace(" ORDER BY since", " AND EXISTS (SELECT 1 FROM " + t
            + " f WHERE f.namespace = ? AND f.kind = ? AND f.lock_name = ? AND (f.owner IS NULL OR f.expires_at <= "
            + now + ")) ORDER BY since");
        releaseAndWake = release + "; " + wakeIfFree;
        releaseAndWakeOther = release + "; " + wakeIfFree.replace(" ORDER BY since", " AND channel <> ? ORDER BY since");
        handOff = "WITH r AS (UPDATE " + t + " SET owner = ?, holds = 1,"
            + " token = GREATEST(" + next + ", token + 1), expires_at = " + now + " + ?"
            + " WHERE " + KEY + " AND owner = ? AND expires_at > " + now + " RETURNING token),"
            + " d AS (DELETE FROM " + w + " WHERE " + KEY + " AND waiter_id = ? AND EXISTS (SELECT 1 FROM r))"
            + " SELECT token FROM r";
        waitersCount = "SELECT COUNT(*) FROM " + w + " WHERE " + KEY + " AND expires_at > " + now;
        purgeWaiters = "DELETE FROM " + w + " WHERE namespace = ? AND expires_at <= " + now;
      }
      case MARIADB -> {
        now = "(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000)";
        String next = "NEXTVAL(" + sequence + ")";
        String free = "(owner IS NULL OR expires_at <= " + now + ")";
        // MariaDB assigns left to right and later assignments see earlier ones: owner and expires_at go
        // last, and expires_at tests the owner that was just written (ours if and only if granted).
        // NOW is the statement's start time throughout.
        grant = "INSERT INTO " + t + " (namespace, kind, lock_name, owner, holds, token, expires_at)"
            + " VALUES (?, ?, ?, ?, 1, " + next + ", " + now + " + ?)"
            + " ON DUPLICATE KEY UPDATE"
            + " token = IF(owner = VALUES(owner) AND expires_at > " + now + ", token, IF(" + free
            + ", IF(token < VALUES(token), VALUES(token), GREATEST(" + next + ", token + 1)), token)),"
            + " holds = IF(" + free + " OR owner = VALUES(owner), 1, holds),"
            + " owner = IF(" + free + " OR owner = VALUES(owner), VALUES(owner), owner),"
            + " expires_at = IF(owner = VALUES(owner), VALUES(expires_at), expires_at)";
        grantOrRegister = null;
        reenter = "UPDATE " + t + " SET holds = holds + 1, expires_at = GREATEST(expires_at, " + now + " + ?)"
            + " WHERE " + KEY + " AND owner = ? AND expires_at > " + now;
        release = releaseSql(t);
        metaEnsure = "INSERT IGNORE INTO " + t + " (namespace, kind, lock_name, permits) VALUES (?, ?, ?, ?)";
        metaSet = "INSERT INTO " + t + " (namespace, kind, lock_name, permits, holds) VALUES (?, ?, ?, ?, 1)"
            + " ON DUPLICATE KEY UPDATE permits = VALUES(permits), holds = 1";
        nextToken = "SELECT " + next;
        waiterRegister = waiterRemove = wake = waitersCount = purgeWaiters = releaseAndWake = null;
        releaseMarked = wakeIfFree = handOff = releaseAndWakeOther = null;
      }
      case H2 -> {
        now = "DATEDIFF(MILLISECOND, TIMESTAMP WITH TIME ZONE '1970-01-01 00:00:00+00', CURRENT_TIMESTAMP)";
        String next = "NEXT VALUE FOR " + sequence;
        grant = "MERGE INTO " + t + " l USING (SELECT CAST(? AS VARCHAR(64)) ns, CAST(? AS CHAR(1)) k,"
            + " CAST(? AS VARCHAR(1024)) nm, CAST(? AS VARCHAR(160)) ow, CAST(? AS BIGINT) lease, "
            + next + " tok, " + now + " n) s"
            + " ON l.namespace = s.ns AND l.kind = s.k AND l.lock_name = s.nm"
            + " WHEN MATCHED AND (l.owner IS NULL OR l.expires_at <= s.n OR l.owner = s.ow) THEN UPDATE SET"
            + " token = CASE WHEN l.owner = s.ow AND l.expires_at > s.n THEN l.token"
            + " WHEN l.token < s.tok THEN s.tok ELSE GREATEST(" + next + ", l.token + 1) END,"
            + " owner = s.ow, holds = 1, expires_at = s.n + s.lease"
            + " WHEN NOT MATCHED THEN INSERT (namespace, kind, lock_name, owner, holds, token, expires_at)"
            + " VALUES (s.ns, s.k, s.nm, s.ow, 1, s.tok, s.n + s.lease)";
        grantOrRegister = null;
        reenter = "UPDATE " + t + " SET holds = holds + 1, expires_at = GREATEST(expires_at, " + now + " + ?)"
            + " WHERE " + KEY + " AND owner = ? AND expires_at > " + now;
        release = releaseSql(t);
        String using = " USING (SELECT CAST(? AS VARCHAR(64)) ns, CAST(? AS CHAR(1)) k,"
            + " CAST(? AS VARCHAR(1024)) nm, CAST(? AS INT) pm) s"
            + " ON t.namespace = s.ns AND t.kind = s.k AND t.lock_name = s.nm";
        metaEnsure = "MERGE INTO " + t + " t" + using
            + " WHEN NOT MATCHED THEN INSERT (namespace, kind, lock_name, permits) VALUES (s.ns, s.k, s.nm, s.pm)";
        metaSet = "MERGE INTO " + t + " t" + using + " WHEN MATCHED THEN UPDATE SET permits = s.pm, holds = 1"
            + " WHEN NOT MATCHED THEN INSERT (namespace, kind, lock_name, permits, holds)"
            + " VALUES (s.ns, s.k, s.nm, s.pm, 1)";
        nextToken = "SELECT " + next;
        waiterRegister = waiterRemove = wake = waitersCount = purgeWaiters = releaseAndWake = null;
        releaseMarked = wakeIfFree = handOff = releaseAndWakeOther = null;
      }
      default -> throw new IllegalArgumentException(String.valueOf(dialect));
    }
    read = "SELECT owner, holds, token, expires_at - " + now + " FROM " + t + " WHERE " + KEY;
    renew = "UPDATE " + t + " SET expires_at = " + now + " + ? WHERE " + KEY + " AND owner = ? AND expires_at > "
        + now;
    inspect = "SELECT owner, holds, token, expires_at - " + now + " FROM " + t + " WHERE " + KEY
        + " AND owner IS NOT NULL AND expires_at > " + now;
    forceUnlock = "UPDATE " + t + " SET owner = NULL, holds = 0, expires_at = " + now + " WHERE " + KEY
        + " AND owner = ?";
    holderForUpdate = "SELECT owner FROM " + t + " WHERE " + KEY + " AND owner IS NOT NULL AND expires_at > "
        + now + " FOR UPDATE";
    // A row is purged only well after its last lease ended: a grant statement that is still blocked on
    // the row (bounded by the command timeout) must find it, or it would insert a new row with a token
    // it drew before the row's last one.
    purgeLocks = "DELETE FROM " + t + " WHERE namespace = ? AND kind = 'L' AND expires_at < " + now + " - ?";
    metaLock = "SELECT permits FROM " + t + " WHERE " + KEY + " FOR UPDATE";
    metaRead = "SELECT permits FROM " + t + " WHERE " + KEY;
    String pkey = "namespace = ? AND lock_name = ?";
    permitsExpire = "DELETE FROM " + p + " WHERE " + pkey + " AND expires_at <= " + now;
    permitsCount = "SELECT COUNT(*), MIN(expires_at) - " + now + " FROM " + p + " WHERE " + pkey
        + " AND expires_at > " + now;
    permitMine = "SELECT token FROM " + p + " WHERE " + pkey + " AND owner = ? AND expires_at > " + now;
    permitInsert = "INSERT INTO " + p + " (namespace, lock_name, owner, token, expires_at) VALUES (?, ?, ?, ?, "
        + now + " + ?)";
    permitRelease = "DELETE FROM " + p + " WHERE " + pkey + " AND owner = ? AND expires_at > " + now;
    permitDrop = "DELETE FROM " + p + " WHERE " + pkey + " AND owner = ?";
    permitRenew = "UPDATE " + p + " SET expires_at = " + now + " + ? WHERE " + pkey + " AND owner = ? AND expires_at > "
        + now;
    permitsList = "SELECT owner, token, expires_at - " + now + " FROM " + p + " WHERE " + pkey + " AND expires_at > "
        + now + " ORDER BY token DESC";
    permitsForce = "DELETE FROM " + p + " WHERE " + pkey;
    permitOwners = "SELECT owner FROM " + p + " WHERE " + pkey + " AND expires_at > " + now;
    purgePermits = "DELETE FROM " + p + " WHERE namespace = ? AND expires_at < " + now + " - ?";
    // Safe while a take runs: takes count permits under the meta row's lock, and one that finds the row
    // gone creates it again (the delete waits for a take that holds the row's lock).
    purgeSemaphores = "DELETE FROM " + t + " WHERE namespace = ? AND kind = 'S' AND holds = 0 AND NOT EXISTS"
        + " (SELECT 1 FROM " + p + " x WHERE x.namespace = " + t + ".namespace AND x.lock_name = " + t
        + ".lock_name)";
    listLocks = "SELECT lock_name FROM " + t + " WHERE namespace = ? AND kind = 'L' AND owner IS NOT NULL"
        + " AND expires_at > " + now + " ORDER BY lock_name";
    listSemaphores = "SELECT DISTINCT lock_name FROM " + p + " WHERE namespace = ? AND expires_at > " + now
        + " ORDER BY lock_name";
    listWaited = dialect != JdbcDialect.POSTGRESQL ? null
        : "SELECT DISTINCT kind, lock_name FROM " + w + " WHERE namespace = ? AND expires_at > " + now;
  }

  /**
   * The owner's release: drops one hold, or all of them when the hold count is at or below the
   * threshold. Assignments are ordered so that each one reads the old hold count on MariaDB too.
   */
  private String releaseSql(String t) {
    return "UPDATE " + t + " SET expires_at = CASE WHEN holds <= ? THEN " + now + " ELSE expires_at END,"
        + " owner = CASE WHEN holds <= ? THEN NULL ELSE owner END,"
        + " holds = CASE WHEN holds <= ? THEN 0 ELSE holds - 1 END"
        + " WHERE " + KEY + " AND owner = ? AND expires_at > " + now;
  }

  /** A probe that fails unless the table has the expected columns. */
  String probeLocks() {
    return "SELECT namespace, kind, lock_name, owner, holds, token, expires_at, permits FROM " + table + " WHERE 1 = 0";
  }

  String probePermits() {
    return "SELECT namespace, lock_name, owner, token, expires_at FROM " + permitsTable + " WHERE 1 = 0";
  }

  String probeWaiters() {
    return "SELECT namespace, kind, lock_name, waiter_id, channel, since, expires_at FROM " + waitersTable
        + " WHERE 1 = 0";
  }

  /** A probe that fails unless the sequence exists; it draws no value. */
  String probeSequence() {
    return switch (dialect) {
      case POSTGRESQL -> "SELECT last_value FROM " + sequence;
      case MARIADB -> "SELECT next_not_cached_value FROM " + sequence;
      // in the table's schema (or the session's), not in any schema; the name was validated as [schema.]word
      case H2 -> "SELECT COUNT(*) FROM INFORMATION_SCHEMA.SEQUENCES WHERE UPPER(SEQUENCE_NAME) = UPPER('"
          + sequence.substring(sequence.lastIndexOf('.') + 1) + "') AND SEQUENCE_SCHEMA = "
          + (sequence.contains(".") ? "UPPER('" + sequence.substring(0, sequence.indexOf('.')) + "')" : "CURRENT_SCHEMA");
    };
  }
}
