package io.locksmith.jdbc;

import io.locksmith.BackendConfigurationException;
import io.locksmith.ClientOptions;
import io.locksmith.internal.DefaultLockClient;
import io.locksmith.internal.ForwardingLockClient;
import io.locksmith.internal.Futures;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Locks in the application's own database, over its {@link DataSource}: PostgreSQL, MariaDB or H2.
 *
 * <pre>{@code
 * try (JdbcLockClient locks = JdbcLockClient.builder().dataSource(pool).build()) {
 *   try (Lease lease = locks.lock("invoice-42").acquire(Duration.ofSeconds(5))) {
 *     store.write(invoice, lease.fencingToken());
 *   }
 * }
 * }</pre>
 *
 * <p><b>The table.</b> One row per lock name and kind (owner, hold count, fencing token, expiry), a permits
 * table for semaphores, a waiters table (fair lock queues; on PostgreSQL also the waiters to wake), and a
 * sequence for tokens; the DDL of each dialect is
 * {@link #ddl(JdbcDialect, String)}. Nothing is created silently: {@link Builder#build()} fails with a
 * {@link BackendConfigurationException} that shows the DDL when the table is missing or has other
 * columns, unless the application asked for {@link Builder#createTableIfMissing()}.
 *
 * <p><b>Leases judged by the database clock.</b> Every expiry is computed and compared by the database
 * ({@code clock_timestamp()} on PostgreSQL, not the transaction-start {@code now()}; {@code
 * UTC_TIMESTAMP(6)} on MariaDB; {@code CURRENT_TIMESTAMP} on H2), never by the application's clock, so
 * clients with skewed clocks neither double-grant nor expire early. Acquiring is one autocommit statement
 * that inserts the row or takes over a free or expired one; release and renewal check the owner;
 * re-entry keeps the token. Expired rows are taken over lazily; {@link #purgeExpired()} and {@link
 * Builder#purgeEvery(Duration)} only keep the table small.
 *
 * <p><b>Fencing tokens</b> come from one database sequence, drawn in the statement that grants: strictly
 * increasing across grants of a name and durable ({@link io.locksmith.FencingGuarantee#STRICT}). {@link
 * JdbcFencedTable} admits them at the protected rows.
 *
 * <p><b>Waiting.</b> On PostgreSQL each client holds one connection in {@code LISTEN} on its own
 * channel; a release notifies the oldest registered waiter's client only, so one release wakes one
 * waiter. On MariaDB and H2 waiters poll with capped exponential backoff and jitter ({@link
 * Builder#pollInterval(Duration, Duration)}), and a release wakes a waiter of the same client at once.
 * Every waiter also re-checks when the holder's lease would run out.
 *
 * <p><b>Fair locks</b> ({@link #fairLock(String)}, lease mode) are granted in order of arrival by the
 * database clock: a queue in the waiters table, one place per waiting acquisition, that expires {@link
 * Builder#fairQueueTimeout(Duration)} after the waiter last asked; a release wakes the head of the queue
 * only. The pinned modes do not offer them.
 *
 * <p><b>Failure.</b> Every call is bounded by {@link Builder#commandTimeout(Duration)}: borrowing a
 * connection, each statement (query timeout) and each socket read (network timeout). A database that
 * cannot be reached or a pool with no free connection fails the call with {@link
 * io.locksmith.BackendUnavailableException} within that time. Serialization failures, deadlocks and lock
 * timeouts reported by the database are retried within it and never reported as a grant; a grant that
 * arrives after its call timed out is given back. A refusal that will not pass by itself fails the call
 * at once, even one that waits: a missing table, column or sequence or a missing privilege with {@link
 * BackendConfigurationException}, any other refusal (a constraint, a trigger) with {@link
 * io.locksmith.LockException}. A read-only server (a replica, an old primary after a failover) counts as
 * an outage: the connection that met it is discarded rather than given back, so the next attempt may
 * reach the new primary. A lease that cannot be renewed goes {@link
 * io.locksmith.LeaseState#UNCERTAIN}, then {@link io.locksmith.LeaseState#LOST}.
 *
 * <p>Thread-safe; create one per application and database, and close it at shutdown (the data source
 * is the application's and stays open).
 */
public final class JdbcLockClient extends ForwardingLockClient {
  private static final Logger log = LoggerFactory.getLogger(JdbcLockClient.class);
  /** Default table name. */
  public static final String DEFAULT_TABLE = "locksmith_locks";
  /** Default bound on every database call, 5 s. */
  public static final Duration DEFAULT_COMMAND_TIMEOUT = Duration.ofSeconds(5);
  /** Longest command timeout accepted, 5 min. */
  public static final Duration MAX_COMMAND_TIMEOUT = Duration.ofMinutes(5);
  /** Default longest interval between a PostgreSQL waiter's own re-checks, 5 s. */
  public static final Duration DEFAULT_WAITER_RECHECK = Duration.ofSeconds(5);
  /** Default first polling interval on MariaDB and H2, 5 ms. */
  public static final Duration DEFAULT_POLL_MIN = Duration.ofMillis(5);
  /** Default longest polling interval on MariaDB and H2, 250 ms. */
  public static final Duration DEFAULT_POLL_MAX = Duration.ofMillis(250);
  /**
   * Default time a fair lock waiter's place in the queue outlives its last attempt, 5 s: how long a waiter
   * that died without giving up its place holds up the waiters behind it.
   */
  public static final Duration DEFAULT_FAIR_QUEUE_TIMEOUT = JdbcFairOps.DEFAULT_PLACE_TIMEOUT;
  /** Default number of statements one client runs at once (and connections it borrows), 16. */
  public static final int DEFAULT_MAX_CONCURRENCY = 16;
  /**
   * How long after its last lease ended a lock row is kept by {@link #purgeExpired()}, 10 min: longer
   * than a grant statement can wait for the row (one command timeout, at most {@link
   * #MAX_COMMAND_TIMEOUT}), so that such a statement finds the row rather than inserting a new one with
   * a token it drew before the row's last one.
   */
  public static final Duration PURGE_GRACE = Duration.ofMinutes(10);
  /** The longest lock name the tables hold, in Unicode code points. */
  public static final int MAX_NAME_LENGTH = 512;

  private static final Pattern TABLE = Pattern.compile("([A-Za-z_][A-Za-z0-9_]{0,40}\\.)?[A-Za-z_][A-Za-z0-9_]{0,40}");
  private static final AtomicInteger CLIENTS = new AtomicInteger();

  private final JdbcBackend.Settings settings;
  private final JdbcLockMode mode;
  private final Db db;
  /** The lease backend, or null in the pinned-connection modes. */
  private final JdbcBackend backend;
  private final io.locksmith.spi.LockBackend lockBackend;
  private final ScheduledFuture<?> purge;
  /** Whether a scheduled purge is running. */
  private final java.util.concurrent.atomic.AtomicBoolean purging = new java.util.concurrent.atomic.AtomicBoolean();

  private JdbcLockClient(io.locksmith.spi.LockBackend lockBackend, Db db, JdbcBackend.Settings settings,
      JdbcLockMode mode, ClientOptions options, Duration purgeEvery) {
    super(new DefaultLockClient(lockBackend, options));
    this.db = db;
    this.settings = settings;
    this.mode = mode;
    this.backend = lockBackend instanceof JdbcBackend lease ? lease : null;
    this.lockBackend = lockBackend;
    // The timer only starts a purge: its work runs on a worker like any call (the timer thread fires
    // every call's deadline and must never wait), and a purge still running skips the next turn.
    this.purge = purgeEvery == null ? null : db.timer().scheduleWithFixedDelay(() -> {
      if (!purging.compareAndSet(false, true)) {
        return;
      }
      CompletableFuture<Integer> run;
      try {
        run = purgeAsync();
      } catch (RuntimeException e) {
        run = CompletableFuture.failedFuture(e);
      }
      run.whenComplete((n, failure) -> {
        purging.set(false);
        if (failure != null) {
          log.debug("scheduled purge failed: {}", failure.toString());
        }
      });
    }, purgeEvery.toMillis(), purgeEvery.toMillis(), TimeUnit.MILLISECONDS);
  }

  private CompletableFuture<Integer> purgeAsync() {
    if (backend != null) {
      return backend.purgeExpired(PURGE_GRACE);
    }
    return lockBackend instanceof PinnedBackend pinned ? pinned.purgeRows() : CompletableFuture.completedFuture(0);
  }

  /** @return a builder with the defaults */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * @param dialect a database
   * @return the DDL script that creates the default table {@value #DEFAULT_TABLE}, its permits and waiters
   *     tables and its token sequence, with comments
   * @throws NullPointerException if {@code dialect} is null
   */
  public static String ddl(JdbcDialect dialect) {
    return ddl(dialect, DEFAULT_TABLE);
  }

  /**
   * @param dialect a database
   * @param table the table name (see {@link Builder#table(String)})
   * @return the DDL script for {@code table}
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code table} is not a valid table name
   */
  public static String ddl(JdbcDialect dialect, String table) {
    Objects.requireNonNull(dialect, "dialect");
    return dialect.ddl(checkTable(table));
  }

  /** For tests in this package. */
  JdbcBackend backend() {
    return backend;
  }

  /** For tests in this package: the backend of any mode. */
  io.locksmith.spi.LockBackend lockBackend() {
    return lockBackend;
  }

  /** For tests in this package: the calls in flight. */
  Db db() {
    return db;
  }

  /** @return the dialect in use (given or detected) */
  public JdbcDialect dialect() {
    return settings.dialect();
  }

  /** @return the lock table's name */
  public String table() {
    return settings.table();
  }

  /** @return how this client's exclusive locks are held */
  public JdbcLockMode mode() {
    return mode;
  }

  /**
   * Deletes this namespace's rows that no lock needs: lock rows whose last lease ended more than {@link
   * #PURGE_GRACE} ago, expired permits, the meta rows of semaphores that have no permit row (a count
   * stored by {@code setPermits} is kept), and the registrations of waiters that died; in the {@link
   * JdbcLockMode#ROW_LOCK} mode, the lock rows no session holds locked (up to 1,000 per call). Never needed
   * for correctness: expired rows are taken over anyway, and a deleted row is created again by the next
   * acquisition of its name. A name's tokens keep increasing after its row was purged (they come from
   * the sequence). The {@link JdbcLockMode#ADVISORY} mode keeps no rows and this returns 0.
   *
   * @return how many rows were deleted
   * @throws io.locksmith.BackendUnavailableException if the database cannot be reached in time
   */
  public int purgeExpired() {
    return Futures.join(purgeAsync());
  }

  /**
   * Counts this namespace's rows in the lock table, held or free (in the row-lock mode, its lock rows).
   * For operators: a name that is free in a namespace without any row suggests a wrong namespace or
   * table rather than a free lock.
   *
   * @return the number of rows
   * @throws io.locksmith.BackendUnavailableException if the database cannot be reached in time
   */
  public long namespaceRows() {
    String count = "SELECT COUNT(*) FROM " + settings.table() + " WHERE namespace = ?";
    return Futures.join(db.call("count the namespace's rows", c -> {
      try (PreparedStatement ps = db.prepare(c, count)) {
        ps.setString(1, options().namespace());
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          return rs.getLong(1);
        }
      }
    }, null));
  }

  @Override
  public void close() {
    if (purge != null) {
      purge.cancel(false);
    }
    super.close();
  }

  @Override
  public String toString() {
    return "JdbcLockClient[" + dialect() + ", " + mode + ", table=" + table() + ", id=" + clientId() + "]";
  }

  static String checkTable(String table) {
    Objects.requireNonNull(table, "table");
    if (!TABLE.matcher(table).matches()) {
      throw new IllegalArgumentException("table must be [schema.]name of letters, digits and '_' (at most 41"
          + " characters each, not starting with a digit), was '" + table + "'");
    }
    return table;
  }

  /** Builds a {@link JdbcLockClient}; not thread-safe. Everything is validated by {@link #build()}. */
  public static final class Builder {
    private DataSource dataSource;
    private DataSource listenerDataSource;
    private JdbcDialect dialect;
    private String table = DEFAULT_TABLE;
    private Duration commandTimeout = DEFAULT_COMMAND_TIMEOUT;
    private Duration waiterRecheck = DEFAULT_WAITER_RECHECK;
    private Duration pollMin = DEFAULT_POLL_MIN;
    private Duration pollMax = DEFAULT_POLL_MAX;
    private Duration fairQueueTimeout = DEFAULT_FAIR_QUEUE_TIMEOUT;
    private int maxConcurrency = DEFAULT_MAX_CONCURRENCY;
    private Duration purgeEvery;
    private boolean createTable;
    private ClientOptions options = ClientOptions.defaults();
    private JdbcLockMode mode = JdbcLockMode.LEASE;

    private Builder() {}

    /**
     * @param mode how exclusive locks are held: {@link JdbcLockMode#LEASE} (default), {@link
     *     JdbcLockMode#ROW_LOCK} or {@link JdbcLockMode#ADVISORY} (PostgreSQL); the pinned-connection
     *     modes offer the exclusive lock only
     * @return this builder
     */
    public Builder mode(JdbcLockMode mode) {
      this.mode = mode;
      return this;
    }

    /**
     * @param dataSource the application's data source, ideally a pool; the client borrows at most
     *     {@link #maxConcurrentStatements(int)} connections at once, plus one it keeps for {@code LISTEN}
     *     on PostgreSQL; never a transaction-pooling proxy (see {@code docs/jdbc.md})
     * @return this builder
     */
    public Builder dataSource(DataSource dataSource) {
      this.dataSource = dataSource;
      return this;
    }

    /**
     * @param dataSource where the PostgreSQL {@code LISTEN} connection comes from, if not from {@link
     *     #dataSource(DataSource)} (e.g. a direct connection while statements go through a pool)
     * @return this builder
     */
    public Builder listenerDataSource(DataSource dataSource) {
      this.listenerDataSource = dataSource;
      return this;
    }

    /**
     * @param dialect the database; detected from the JDBC metadata when not set (or null)
     * @return this builder
     */
    public Builder dialect(JdbcDialect dialect) {
      this.dialect = dialect;
      return this;
    }

    /**
     * @param table the lock table, {@code [schema.]name}; the permits table, waiters table and token
     *     sequence are named after it ({@code <table>_permits}, {@code <table>_waiters}, {@code
     *     <table>_token}); default {@value #DEFAULT_TABLE}
     * @return this builder
     */
    public Builder table(String table) {
      this.table = table;
      return this;
    }

    /**
     * @param timeout bound on every database call: borrowing a connection, the statements, the socket;
     *     default 5 s, 1 ms to {@link #MAX_COMMAND_TIMEOUT}
     * @return this builder
     */
    public Builder commandTimeout(Duration timeout) {
      this.commandTimeout = timeout;
      return this;
    }

    /**
     * @param interval PostgreSQL: longest time a waiter goes without re-checking by itself (a backstop
     *     for a lost notification); default 5 s, 10 ms to 1 h
     * @return this builder
     */
    public Builder waiterRecheck(Duration interval) {
      this.waiterRecheck = interval;
      return this;
    }

    /**
     * @param min MariaDB and H2: the first polling interval of a waiter, doubled after every refusal;
     *     default 5 ms, at least 1 ms
     * @param max the cap; default 250 ms, at least {@code min}, at most 1 min
     * @return this builder
     */
    public Builder pollInterval(Duration min, Duration max) {
      this.pollMin = min;
      this.pollMax = max;
      return this;
    }

    /**
     * @param timeout how long a fair lock waiter's place in the queue outlives its last attempt (a live
     *     waiter asks again within a third of it): a waiter that died holds up the ones behind it for at
     *     most this long; default 5 s, 100 ms to 1 h. Clients of one table may differ (each place carries
     *     its own expiry)
     * @return this builder
     */
    public Builder fairQueueTimeout(Duration timeout) {
      this.fairQueueTimeout = timeout;
      return this;
    }

    /**
     * @param max how many statements this client runs at once, i.e. how many connections it borrows at
     *     once; further calls queue (within their command timeout); default 16, 1 to 256
     * @return this builder
     */
    public Builder maxConcurrentStatements(int max) {
      this.maxConcurrency = max;
      return this;
    }

    /**
     * @param interval run {@link JdbcLockClient#purgeExpired()} this often in the background; default
     *     never; 1 s to 1 day
     * @return this builder
     */
    public Builder purgeEvery(Duration interval) {
      this.purgeEvery = interval;
      return this;
    }

    /**
     * Asks {@link #build()} to create the tables and the sequence with {@code IF NOT EXISTS} before it
     * checks them. Off by default: an application calls this on purpose (or runs {@link
     * JdbcLockClient#ddl(JdbcDialect, String)} in its migrations).
     *
     * @return this builder
     */
    public Builder createTableIfMissing() {
      this.createTable = true;
      return this;
    }

    /**
     * @param options namespace, default lease policy, clock, client name; {@link
     *     ClientOptions#maxNameLength()} must be at most {@value JdbcLockClient#MAX_NAME_LENGTH}
     * @return this builder
     */
    public Builder options(ClientOptions options) {
      this.options = options;
      return this;
    }

    /**
     * Validates the settings, detects the dialect, creates the tables if asked, checks them, and starts
     * the client (on PostgreSQL: its {@code LISTEN} connection).
     *
     * @return the client
     * @throws NullPointerException if the data source or a setting is null
     * @throws IllegalArgumentException if a setting is out of its documented range, the table name is
     *     not valid, or {@link JdbcLockMode#ADVISORY} is asked of a database other than PostgreSQL
     * @throws BackendConfigurationException if the database is not supported, or the table, its
     *     companions or the sequence are missing or have other columns (the message shows the DDL), a
     *     table lacks its primary key, a name column compares loosely (ignores case or trailing spaces), or
     *     the sequence can hand out a value below an earlier one (a per-session {@code CACHE} on
     *     PostgreSQL, {@code CYCLE}, a negative increment); the message says how to fix it
     * @throws io.locksmith.BackendUnavailableException if the database cannot be reached within the
     *     command timeout
     * @throws io.locksmith.LockException if the database refuses the DDL
     */
    public JdbcLockClient build() {
      Objects.requireNonNull(dataSource, "dataSource");
      Objects.requireNonNull(commandTimeout, "commandTimeout");
      Objects.requireNonNull(waiterRecheck, "waiterRecheck");
      Objects.requireNonNull(pollMin, "pollInterval min");
      Objects.requireNonNull(pollMax, "pollInterval max");
      Objects.requireNonNull(options, "options");
      Objects.requireNonNull(mode, "mode");
      Objects.requireNonNull(fairQueueTimeout, "fairQueueTimeout");
      checkTable(table);
      within("commandTimeout", commandTimeout, Duration.ofMillis(1), MAX_COMMAND_TIMEOUT);
      within("waiterRecheck", waiterRecheck, Duration.ofMillis(10), Duration.ofHours(1));
      within("pollInterval min", pollMin, Duration.ofMillis(1), Duration.ofMinutes(1));
      within("pollInterval max", pollMax, pollMin, Duration.ofMinutes(1));
      within("fairQueueTimeout", fairQueueTimeout, Duration.ofMillis(100), Duration.ofHours(1));
      if (purgeEvery != null) {
        within("purgeEvery", purgeEvery, Duration.ofSeconds(1), Duration.ofDays(1));
      }
      if (maxConcurrency < 1 || maxConcurrency > 256) {
        throw new IllegalArgumentException("maxConcurrentStatements must be in 1..256, was " + maxConcurrency);
      }
      if (options.maxNameLength() > MAX_NAME_LENGTH) {
        throw new IllegalArgumentException("the JDBC tables hold lock names of at most " + MAX_NAME_LENGTH
            + " characters; ClientOptions.maxNameLength is " + options.maxNameLength());
      }
      Db db = new Db(dataSource, commandTimeout, maxConcurrency, "c" + CLIENTS.incrementAndGet());
      try {
        JdbcDialect d = dialect != null ? dialect
            : Futures.join(db.call("read the database metadata", c -> JdbcDialect.detect(c.getMetaData()), null));
        Sql sql = new Sql(d, table);
        // CREATE … IF NOT EXISTS still waits for a lock on an existing table (MariaDB's metadata lock,
        // held by any open transaction on it): create only what the probes find missing
        if (createTable && problem(db, sql) != null) {
          createTables(db, d);
        }
        checkTables(db, sql);
        List<String> problems = Futures.join(db.call("check the lock tables' keys, collations and token sequence",
            c -> TableCheck.problems(c, sql), null));
        if (!problems.isEmpty()) {
          throw new BackendConfigurationException("the lock tables of '" + table + "' cannot hold locks safely: "
              + String.join("; ", problems));
        }
        JdbcBackend.Settings settings = new JdbcBackend.Settings(dataSource,
            listenerDataSource != null ? listenerDataSource : dataSource, d, table, commandTimeout,
            waiterRecheck, pollMin, pollMax, maxConcurrency);
        io.locksmith.spi.LockBackend backend = mode == JdbcLockMode.LEASE ? new JdbcBackend(settings, db)
            : new PinnedBackend(settings, mode, db);
        if (backend instanceof JdbcBackend lease) {
          lease.fair.placeTimeout(fairQueueTimeout);
        }
        JdbcLockClient client = new JdbcLockClient(backend, db, settings, mode, options, purgeEvery);
        log.info("JDBC lock client {} started on {} (mode {}, table {}, namespace '{}'{})", client.clientId(), d,
            mode, table, options.namespace(), options.clientName().map(n -> ", name '" + n + "'").orElse(""));
        return client;
      } catch (RuntimeException e) {
        db.close();
        throw e;
      }
    }

    private void createTables(Db db, JdbcDialect d) {
      List<String> statements = d.ddlStatements(table);
      Futures.join(db.call("create the lock tables", c -> {
        try (Statement s = c.createStatement()) {
          for (String ddl : statements) {
            s.execute(ddl);
          }
        }
        return null;
      }, null));
    }

    private static String problem(Db db, Sql sql) {
      // the waiters table: PostgreSQL's wake-ups, and every dialect's fair lock queue; the read-write table
      List<String> probes = List.of(sql.probeLocks(), sql.probePermits(), sql.probeSequence(), sql.probeWaiters(),
          new ReadWriteSql(sql).probe());
      return Futures.join(db.call("check the lock tables", c -> probe(c, probes), null));
    }

    private void checkTables(Db db, Sql sql) {
      String problem = problem(db, sql);
      if (problem != null) {
        throw new BackendConfigurationException("the lock table '" + table + "' (or its companions) is missing or"
            + " has other columns: " + problem + ". Create it with JdbcLockClient.ddl(JdbcDialect." + sql.dialect
            + ", \"" + table + "\") in your migrations, or call createTableIfMissing() on the builder:\n"
            + sql.dialect.ddl(table));
      }
    }

    private static String probe(Connection c, List<String> probes) throws SQLException {
      for (String probe : probes) {
        try (PreparedStatement ps = c.prepareStatement(probe); ResultSet rs = ps.executeQuery()) {
          if (probe.contains("INFORMATION_SCHEMA.SEQUENCES") && (!rs.next() || rs.getInt(1) == 0)) {
            return "no sequence";
          }
        } catch (SQLException e) {
          if (Db.classify(e) == Db.Kind.UNAVAILABLE) {
            throw e;
          }
          if (!c.getAutoCommit()) {
            c.rollback();
          }
          return e.getMessage();
        }
      }
      return null;
    }

    private static void within(String what, Duration d, Duration min, Duration max) {
      if (d.compareTo(min) < 0 || d.compareTo(max) > 0) {
        throw new IllegalArgumentException(what + " must be from " + min + " to " + max + ", was " + d);
      }
    }
  }
}
