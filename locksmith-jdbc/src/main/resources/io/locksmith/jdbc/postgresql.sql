-- Locksmith JDBC backend, PostgreSQL. ${table} is the table name given to the builder (default locksmith_locks).
-- Times are milliseconds since the epoch by the DATABASE clock (clock_timestamp()), never the application's.
CREATE TABLE IF NOT EXISTS ${table} (
  namespace  VARCHAR(64)  NOT NULL,
  kind       CHAR(1)      NOT NULL,       -- L: exclusive lock, F: fair lock, S: semaphore (its stored permit count), W: read-write lock (its writer)
  lock_name  VARCHAR(512) NOT NULL,
  owner      VARCHAR(160),                -- NULL: free
  holds      INTEGER      NOT NULL DEFAULT 0,
  token      BIGINT       NOT NULL DEFAULT 0,
  expires_at BIGINT       NOT NULL DEFAULT 0,
  permits    INTEGER,
  PRIMARY KEY (namespace, kind, lock_name)
);
CREATE TABLE IF NOT EXISTS ${table}_permits (
  namespace  VARCHAR(64)  NOT NULL,
  lock_name  VARCHAR(512) NOT NULL,
  owner      VARCHAR(160) NOT NULL,
  token      BIGINT       NOT NULL,
  expires_at BIGINT       NOT NULL,
  PRIMARY KEY (namespace, lock_name, owner)
);
CREATE TABLE IF NOT EXISTS ${table}_waiters (
  namespace  VARCHAR(64)  NOT NULL,
  kind       CHAR(1)      NOT NULL,
  lock_name  VARCHAR(512) NOT NULL,
  waiter_id  VARCHAR(64)  NOT NULL,
  channel    VARCHAR(63)  NOT NULL,       -- the waiting client's LISTEN channel
  since      BIGINT       NOT NULL,       -- a fair lock's (kind F) place in its queue
  expires_at BIGINT       NOT NULL,
  PRIMARY KEY (namespace, kind, lock_name, waiter_id)
);
-- Read-write locks: each reader's hold (member_kind R: owner, hold count, token, lease end) and each
-- waiting reader (r, with its ticket) and waiting writer (w); the writer itself is the lock table's row
-- of kind W. Added after the first release: CREATE IF NOT EXISTS gives existing deployments the table.
CREATE TABLE IF NOT EXISTS ${table}_rw (
  namespace   VARCHAR(64)  NOT NULL,
  lock_name   VARCHAR(512) NOT NULL,
  member_id   VARCHAR(160) NOT NULL,       -- a reader's owner id, or a waiter id
  member_kind CHAR(1)      NOT NULL,       -- R: reader holds, r: reader waits, w: writer waits
  holds       INTEGER      NOT NULL DEFAULT 0,
  token       BIGINT       NOT NULL DEFAULT 0,
  ticket      BIGINT       NOT NULL DEFAULT 0,
  channel     VARCHAR(63),                 -- the waiting client's channel
  since       BIGINT       NOT NULL,
  expires_at  BIGINT       NOT NULL,
  PRIMARY KEY (namespace, lock_name, member_id, member_kind)
);
CREATE SEQUENCE IF NOT EXISTS ${table}_token;
