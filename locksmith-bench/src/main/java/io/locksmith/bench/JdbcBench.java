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
 * {@code locksmith bench --backend postgres}: Locksmith's JDBC backend (lease mode, LISTEN/NOTIFY) next
 * to Spring Integration's {@code JdbcLockRegistry} (its defaults: 10 s time to live, polling every
 * 100 ms), on one embedded PostgreSQL, in the same alternating slices as {@link Bench}. Each
 * implementation has a pool of its own of the same size.
 *
 * <p>In the hot-key scenario every thread is a client of its own (its own {@code JdbcLockClient}, its
 * own {@code JdbcLockRegistry} with its own client id), as processes contending for a lock are: one
 * registry shared by threads hands a lock over through a {@code ReentrantLock} in its JVM, which is not
 * what a database lock is for. Uncontended and many-keys share one client per implementation.
 * Not thread-safe; one run at a time.
 */
public final class JdbcBench {
  /** The peers {@code --against} accepts with {@code --backend postgres}. */
  public static final List<String> PEERS = List.of("spring-jdbc");

  private JdbcBench() {}

  /**
   * @param settings the scenario (uncontended, many-keys or hot-key), duration and threads (its Redis
   *     peers, URIs and rtt are not used)
   * @param against peers from {@link #PEERS}, or none
   * @param progress one line per step
   * @return the results, one per implementation
   * @throws IllegalArgumentException for another scenario or peer
   * @throws Exception if the database cannot be started or an implementation fails
   */
  public static BenchReport run(BenchSettings settings, List<String> against, PrintStream progress)
      throws Exception {
    if (settings.scenario() != Scenario.UNCONTENDED && settings.scenario() != Scenario.MANY_KEYS
        && settings.scenario() != Scenario.HOT_KEY) {
      throw new IllegalArgumentException("--backend postgres runs uncontended, many-keys and hot-key");
    }
    for (String peer : against) {
      if (!PEERS.contains(peer)) {
        throw new IllegalArgumentException("--backend postgres compares with " + PEERS + ", not " + peer);
      }
    }
    int threads = settings.effectiveThreads();
    boolean perThread = settings.scenario() == Scenario.HOT_KEY;
    int poolSize = Math.min(250, Math.max(16, perThread ? threads * 3 : threads + 8));
    List<AutoCloseable> owned = new ArrayList<>();
    try (PostgresServer pg = PostgresServer.start()) {
      progress.println("PostgreSQL on port " + pg.port() + ", pools of " + poolSize + " connections");
      Map<LockImpl, List<String>> impls = new LinkedHashMap<>();
      HikariDataSource ours = pool(pg.jdbcUrl(), poolSize);
      owned.add(ours);
      JdbcLockClient.builder().dataSource(ours).createTableIfMissing().build().close();
      // per-thread clients: a LISTEN connection and 2 statements each; one shared client: a statement per thread
      int statements = perThread ? 2 : Math.min(256, Math.max(16, threads));
      LocksmithJdbcImpl locksmith = new LocksmithJdbcImpl(perThread, () -> JdbcLockClient.builder()
          .dataSource(ours).maxConcurrentStatements(statements).build());
      owned.add(locksmith);
      impls.put(locksmith, List.of());
      if (against.contains("spring-jdbc")) {
        HikariDataSource theirs = pool(pg.jdbcUrl(), poolSize);
        owned.add(theirs);
        springSchema(theirs);
        SpringJdbcImpl spring = new SpringJdbcImpl(perThread, theirs);
        owned.add(spring);
        impls.put(spring, List.of());
      }
      try {
        return Bench.measure(settings, impls, "PostgreSQL 17", progress);
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

  private static HikariDataSource pool(String url, int size) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setMaximumPoolSize(size);
    config.setMinimumIdle(size);
    return new HikariDataSource(config);
  }

  /** Spring Integration's own DDL for PostgreSQL, from its jar. */
  private static void springSchema(HikariDataSource ds) throws Exception {
    String ddl;
    try (InputStream in = DefaultLockRepository.class.getResourceAsStream(
        "/org/springframework/integration/jdbc/schema-postgresql.sql")) {
      if (in == null) {
        throw new IllegalStateException("spring-integration-jdbc has no schema-postgresql.sql");
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
    private final Instances<JdbcLockClient> clients;

    LocksmithJdbcImpl(boolean perThread, Supplier<JdbcLockClient> factory) {
      this.clients = new Instances<>(perThread, factory);
    }

    @Override
    public String name() {
      return "locksmith-jdbc";
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

  /** Spring Integration's {@code JdbcLockRegistry} with its defaults. */
  static final class SpringJdbcImpl implements LockImpl {
    private final Instances<JdbcLockRegistry> registries;
    private final List<DefaultLockRepository> repositories = new java.util.concurrent.CopyOnWriteArrayList<>();

    SpringJdbcImpl(boolean perThread, HikariDataSource ds) {
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
      return "spring-jdbc";
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
