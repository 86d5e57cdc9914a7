package io.locksmith.jdbc;

/**
 * How a {@link JdbcLockClient}'s exclusive locks are held. See {@code docs/jdbc.md} for when to use
 * which. Immutable and thread-safe.
 */
public enum JdbcLockMode {
  /**
   * The default: a lease row judged by the database clock, taken in one autocommit statement; no
   * connection is held between calls. Every lock kind the client offers (exclusive lock, semaphore).
   */
  LEASE,
  /**
   * The seed's {@code SELECT … FOR UPDATE}: each held lock keeps a transaction open on a connection of
   * its own, holding the lock row's row lock; the database frees it when the transaction ends, also when
   * the holder's process or connection dies. Exclusive lock only. The client also ends the transaction
   * when a lease is not renewed in time (the same lease rule as {@link #LEASE}, timed by the client).
   */
  ROW_LOCK,
  /**
   * PostgreSQL only: a session-level {@code pg_try_advisory_lock} on a connection of its own per held
   * lock, freed by the database when the session ends. Breaks behind transaction-pooling proxies
   * (PgBouncer in transaction mode), which hand the session to others: the client records the server
   * session (backend pid) at the grant, refuses a grant on a session that already holds the lock, and
   * reports the lease lost when a check finds the connection on another session, but cannot make the
   * lock hold there. An unlock that fails ends the session rather than pooling it with the lock.
   * Exclusive lock only. Locks of this mode and of the others never exclude each other, even for one name.
   */
  ADVISORY
}
