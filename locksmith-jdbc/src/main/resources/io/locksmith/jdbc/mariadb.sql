-- Locksmith JDBC backend, MariaDB 10.3 or later (sequences). ${table} is the table name given to the builder.
-- Times are milliseconds since the epoch by the DATABASE clock (UTC_TIMESTAMP(6)), never the application's.
-- Names compare exactly (utf8mb4_nopad_bin), as lock names do everywhere else: case-sensitively, and
-- NO PAD, so 'job' and 'job ' are two locks (utf8mb4_bin is PAD SPACE: it ignores trailing spaces).
CREATE TABLE IF NOT EXISTS ${table} (
  namespace  VARCHAR(64)  CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
  kind       CHAR(1)      CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  lock_name  VARCHAR(512) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
  owner      VARCHAR(160) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  holds      INT          NOT NULL DEFAULT 0,
  token      BIGINT       NOT NULL DEFAULT 0,
  expires_at BIGINT       NOT NULL DEFAULT 0,
  permits    INT,
  PRIMARY KEY (namespace, kind, lock_name)
) ENGINE=InnoDB;
CREATE TABLE IF NOT EXISTS ${table}_permits (
  namespace  VARCHAR(64)  CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
  lock_name  VARCHAR(512) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
  owner      VARCHAR(160) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
  token      BIGINT       NOT NULL,
  expires_at BIGINT       NOT NULL,
  PRIMARY KEY (namespace, lock_name, owner)
) ENGINE=InnoDB;
-- The fair lock's queue (kind F): one row per waiting acquisition, in order of since (its place,
-- set once by the database clock), dropped when its expires_at passes (the waiter stopped asking).
CREATE TABLE IF NOT EXISTS ${table}_waiters (
  namespace  VARCHAR(64)  CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
  kind       CHAR(1)      CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  lock_name  VARCHAR(512) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
  waiter_id  VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  channel    VARCHAR(63)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  since      BIGINT       NOT NULL,
  expires_at BIGINT       NOT NULL,
  PRIMARY KEY (namespace, kind, lock_name, waiter_id)
) ENGINE=InnoDB;
-- Read-write locks: readers (member_kind R) and waiting readers (r) and writers (w); the writer is the
-- lock table's row of kind W. Added after the first release: CREATE IF NOT EXISTS adds it to old schemas.
CREATE TABLE IF NOT EXISTS ${table}_rw (
  namespace   VARCHAR(64)  CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
  lock_name   VARCHAR(512) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
  member_id   VARCHAR(160) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
  member_kind CHAR(1)      CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  holds       INT          NOT NULL DEFAULT 0,
  token       BIGINT       NOT NULL DEFAULT 0,
  ticket      BIGINT       NOT NULL DEFAULT 0,
  channel     VARCHAR(63),
  since       BIGINT       NOT NULL,
  expires_at  BIGINT       NOT NULL,
  PRIMARY KEY (namespace, lock_name, member_id, member_kind)
) ENGINE=InnoDB;
CREATE SEQUENCE IF NOT EXISTS ${table}_token ENGINE=InnoDB;
