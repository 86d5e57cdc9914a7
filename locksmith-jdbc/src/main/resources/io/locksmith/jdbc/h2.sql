-- Locksmith JDBC backend, H2 2.x. ${table} is the table name given to the builder.
-- Times are milliseconds since the epoch by the DATABASE clock (CURRENT_TIMESTAMP, frozen within a
-- transaction in H2: the lease statements are single autocommit statements).
CREATE TABLE IF NOT EXISTS ${table} (
  namespace  VARCHAR(64)   NOT NULL,
  kind       CHAR(1)       NOT NULL,
  lock_name  VARCHAR(1024) NOT NULL,
  owner      VARCHAR(160),
  holds      INT           NOT NULL DEFAULT 0,
  token      BIGINT        NOT NULL DEFAULT 0,
  expires_at BIGINT        NOT NULL DEFAULT 0,
  permits    INT,
  PRIMARY KEY (namespace, kind, lock_name)
);
CREATE TABLE IF NOT EXISTS ${table}_permits (
  namespace  VARCHAR(64)   NOT NULL,
  lock_name  VARCHAR(1024) NOT NULL,
  owner      VARCHAR(160)  NOT NULL,
  token      BIGINT        NOT NULL,
  expires_at BIGINT        NOT NULL,
  PRIMARY KEY (namespace, lock_name, owner)
);
-- The fair lock's queue (kind F): one row per waiting acquisition, in order of since (its place,
-- set once by the database clock), dropped when its expires_at passes (the waiter stopped asking).
CREATE TABLE IF NOT EXISTS ${table}_waiters (
  namespace  VARCHAR(64)   NOT NULL,
  kind       CHAR(1)       NOT NULL,
  lock_name  VARCHAR(1024) NOT NULL,
  waiter_id  VARCHAR(64)   NOT NULL,
  channel    VARCHAR(63)   NOT NULL,
  since      BIGINT        NOT NULL,
  expires_at BIGINT        NOT NULL,
  PRIMARY KEY (namespace, kind, lock_name, waiter_id)
);
-- Read-write locks: readers (member_kind R) and waiting readers (r) and writers (w); the writer is the
-- lock table's row of kind W. Added after the first release: CREATE IF NOT EXISTS adds it to old schemas.
CREATE TABLE IF NOT EXISTS ${table}_rw (
  namespace   VARCHAR(64)   NOT NULL,
  lock_name   VARCHAR(1024) NOT NULL,
  member_id   VARCHAR(160)  NOT NULL,
  member_kind CHAR(1)       NOT NULL,
  holds       INT           NOT NULL DEFAULT 0,
  token       BIGINT        NOT NULL DEFAULT 0,
  ticket      BIGINT        NOT NULL DEFAULT 0,
  channel     VARCHAR(63),
  since       BIGINT        NOT NULL,
  expires_at  BIGINT        NOT NULL,
  PRIMARY KEY (namespace, lock_name, member_id, member_kind)
);
CREATE SEQUENCE IF NOT EXISTS ${table}_token;
