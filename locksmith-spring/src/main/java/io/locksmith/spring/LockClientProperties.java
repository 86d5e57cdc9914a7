package io.locksmith.spring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The settings of one lock client: which backend, and that backend's connection settings. The primary
 * client reads them under {@code locksmith.*}; each named client under {@code locksmith.clients.<name>.*}.
 *
 * <p>A plain mutable bean, bound once by Spring at start-up and then only read: not thread-safe for
 * writing. Values are checked when the client is built; a bad value fails the application's start-up with
 * an exception that names the property.
 */
public class LockClientProperties {

  /**
   * The backend of this client. When unset it is inferred from the settings present: redis.uri gives
   * redis, redlock.nodes gives redlock, zookeeper.connect-string gives zookeeper; JDBC must be chosen
   * explicitly. The in-JVM backend is for tests and single-instance applications only.
   */
  private Backend backend;

  /** Prefix of every lock name this client uses, so that several applications can share a server. */
  private String namespace = "locksmith";

  /** Name this client reports to operators (lock owners, Redis CLIENT SETNAME); unset means none. */
  private String clientName;

  /**
   * Lease time of locks taken without an explicit one. The lease is watched (renewed while held) unless
   * lease-watched is false.
   */
  private Duration leaseTime = Duration.ofSeconds(30);

  /** Whether leases are renewed while held (watched) or simply expire after lease-time (fixed). */
  private boolean leaseWatched = true;

  private final Redis redis = new Redis();
  private final Redlock redlock = new Redlock();
  private final ZooKeeper zookeeper = new ZooKeeper();
  private final Jdbc jdbc = new Jdbc();

  /**
   * The backend.
   *
   * @return the backend, or null to infer it
   */
  public Backend getBackend() {
    return backend;
  }

  /**
   * Sets the backend.
   *
   * @param backend the backend, or null to infer it
   */
  public void setBackend(Backend backend) {
    this.backend = backend;
  }

  /**
   * The namespace.
   *
   * @return the namespace
   */
  public String getNamespace() {
    return namespace;
  }

  /**
   * Sets the namespace.
   *
   * @param namespace the namespace
   */
  public void setNamespace(String namespace) {
    this.namespace = namespace;
  }

  /**
   * The client name.
   *
   * @return the client name, or null
   */
  public String getClientName() {
    return clientName;
  }

  /**
   * Sets the client name.
   *
   * @param clientName the client name, or null
   */
  public void setClientName(String clientName) {
    this.clientName = clientName;
  }

  /**
   * The default lease time.
   *
   * @return the default lease time
   */
  public Duration getLeaseTime() {
    return leaseTime;
  }

  /**
   * Sets the default lease time.
   *
   * @param leaseTime the default lease time
   */
  public void setLeaseTime(Duration leaseTime) {
    this.leaseTime = leaseTime;
  }

  /**
   * Whether default leases are watched.
   *
   * @return true when watched
   */
  public boolean isLeaseWatched() {
    return leaseWatched;
  }

  /**
   * Sets whether default leases are watched.
   *
   * @param leaseWatched true for watched leases
   */
  public void setLeaseWatched(boolean leaseWatched) {
    this.leaseWatched = leaseWatched;
  }

  /**
   * The Redis settings.
   *
   * @return the Redis settings
   */
  public Redis getRedis() {
    return redis;
  }

  /**
   * The Redlock settings.
   *
   * @return the Redlock settings
   */
  public Redlock getRedlock() {
    return redlock;
  }

  /**
   * The ZooKeeper settings.
   *
   * @return the ZooKeeper settings
   */
  public ZooKeeper getZookeeper() {
    return zookeeper;
  }

  /**
   * The JDBC settings.
   *
   * @return the JDBC settings
   */
  public Jdbc getJdbc() {
    return jdbc;
  }

  /** The backends a client can use. */
  public enum Backend {
    /** In this JVM only: tests and single-instance applications. */
    IN_JVM,
    /** One Redis deployment: single node, Sentinel or Cluster (needs locksmith-redis). */
    REDIS,
    /** Redlock over independent Redis nodes (needs locksmith-redis). */
    REDLOCK,
    /** ZooKeeper through Curator (needs locksmith-zookeeper). */
    ZOOKEEPER,
    /** The application's database (needs locksmith-jdbc and a DataSource). */
    JDBC
  }

  /** Redis settings ({@code locksmith.redis.*}). Not thread-safe for writing. */
  public static class Redis {
    /**
     * Where Redis is: redis://, rediss:// (TLS), redis-sentinel:// or redis-cluster://, with password
     * and database in the URI where needed.
     */
    private String uri;

    /** Upper bound of every Redis command; a command without an answer by then fails. */
    private Duration commandTimeout = Duration.ofSeconds(2);

    /** How often a waiting acquisition re-checks the lock in case it missed a release notice. */
    private Duration waiterRecheck = Duration.ofSeconds(5);

    /**
     * Replicas that must acknowledge every grant (Redis WAIT) before it counts; 0 turns replica
     * acknowledgement off.
     */
    private int replicaAckReplicas;

    /** How long a grant waits for the replicas' acknowledgement. */
    private Duration replicaAckTimeout = Duration.ofMillis(500);

    /**
     * What to do when fewer replicas acknowledge in time: REQUIRE fails the acquisition (giving the grant
     * back), REPORT keeps it and reports the count on the lease.
     */
    private String replicaAckPolicy = "REQUIRE";

    /**
     * The URI.
     *
     * @return the URI, or null
     */
    public String getUri() {
      return uri;
    }

    /**
     * Sets the URI.
     *
     * @param uri the URI
     */
    public void setUri(String uri) {
      this.uri = uri;
    }

    /**
     * The command timeout.
     *
     * @return the command timeout
     */
    public Duration getCommandTimeout() {
      return commandTimeout;
    }

    /**
     * Sets the command timeout.
     *
     * @param commandTimeout the command timeout
     */
    public void setCommandTimeout(Duration commandTimeout) {
      this.commandTimeout = commandTimeout;
    }

    /**
     * The waiter re-check interval.
     *
     * @return the interval
     */
    public Duration getWaiterRecheck() {
      return waiterRecheck;
    }

    /**
     * Sets the waiter re-check interval.
     *
     * @param waiterRecheck the interval
     */
    public void setWaiterRecheck(Duration waiterRecheck) {
      this.waiterRecheck = waiterRecheck;
    }

    /**
     * The replicas that must acknowledge.
     *
     * @return the count, 0 for none
     */
    public int getReplicaAckReplicas() {
      return replicaAckReplicas;
    }

    /**
     * Sets the replicas that must acknowledge.
     *
     * @param replicaAckReplicas the count, 0 for none
     */
    public void setReplicaAckReplicas(int replicaAckReplicas) {
      this.replicaAckReplicas = replicaAckReplicas;
    }

    /**
     * The replica acknowledgement timeout.
     *
     * @return the timeout
     */
    public Duration getReplicaAckTimeout() {
      return replicaAckTimeout;
    }

    /**
     * Sets the replica acknowledgement timeout.
     *
     * @param replicaAckTimeout the timeout
     */
    public void setReplicaAckTimeout(Duration replicaAckTimeout) {
      this.replicaAckTimeout = replicaAckTimeout;
    }

    /**
     * The replica acknowledgement policy name.
     *
     * @return the policy name
     */
    public String getReplicaAckPolicy() {
      return replicaAckPolicy;
    }

    /**
     * Sets the replica acknowledgement policy name.
     *
     * @param replicaAckPolicy the policy name
     */
    public void setReplicaAckPolicy(String replicaAckPolicy) {
      this.replicaAckPolicy = replicaAckPolicy;
    }
  }

  /** Redlock settings ({@code locksmith.redlock.*}). Not thread-safe for writing. */
  public static class Redlock {
    /** The independent Redis nodes (redis:// or rediss:// URIs); at least three for a useful quorum. */
    private List<String> nodes = new ArrayList<>();

    /** Upper bound of every command on one node. */
    private Duration nodeTimeout = Duration.ofMillis(250);

    /**
     * The nodes.
     *
     * @return the node URIs
     */
    public List<String> getNodes() {
      return nodes;
    }

    /**
     * Sets the nodes.
     *
     * @param nodes the node URIs
     */
    public void setNodes(List<String> nodes) {
      this.nodes = nodes;
    }

    /**
     * The per-node timeout.
     *
     * @return the timeout
     */
    public Duration getNodeTimeout() {
      return nodeTimeout;
    }

    /**
     * Sets the per-node timeout.
     *
     * @param nodeTimeout the timeout
     */
    public void setNodeTimeout(Duration nodeTimeout) {
      this.nodeTimeout = nodeTimeout;
    }
  }

  /** ZooKeeper settings ({@code locksmith.zookeeper.*}). Not thread-safe for writing. */
  public static class ZooKeeper {
    /**
     * The ensemble, host:port[,host:port...][/chroot]. When unset and the application has a
     * CuratorFramework bean, that one is used.
     */
    private String connectString;

    /** The ZooKeeper session timeout; a lease is lost when its session expires. */
    private Duration sessionTimeout = Duration.ofSeconds(15);

    /** How long to wait for the first connection at start-up. */
    private Duration connectionTimeout = Duration.ofSeconds(5);

    /**
     * The connect string.
     *
     * @return the connect string, or null
     */
    public String getConnectString() {
      return connectString;
    }

    /**
     * Sets the connect string.
     *
     * @param connectString the connect string
     */
    public void setConnectString(String connectString) {
      this.connectString = connectString;
    }

    /**
     * The session timeout.
     *
     * @return the session timeout
     */
    public Duration getSessionTimeout() {
      return sessionTimeout;
    }

    /**
     * Sets the session timeout.
     *
     * @param sessionTimeout the session timeout
     */
    public void setSessionTimeout(Duration sessionTimeout) {
      this.sessionTimeout = sessionTimeout;
    }

    /**
     * The connection timeout.
     *
     * @return the connection timeout
     */
    public Duration getConnectionTimeout() {
      return connectionTimeout;
    }

    /**
     * Sets the connection timeout.
     *
     * @param connectionTimeout the connection timeout
     */
    public void setConnectionTimeout(Duration connectionTimeout) {
      this.connectionTimeout = connectionTimeout;
    }
  }

  /** JDBC settings ({@code locksmith.jdbc.*}). Not thread-safe for writing. */
  public static class Jdbc {
    /** The DataSource bean to use; unset means the application's only (or primary) DataSource. */
    private String dataSource;

    /** The lock table. */
    private String table = "locksmith_locks";

    /** How locks are held in the database: LEASE (rows with an expiry), ROW_LOCK or ADVISORY. */
    private String mode = "LEASE";

    /** Whether to create the lock table at start-up when it is missing. */
    private boolean createTable;

    /** Upper bound of every lock statement. */
    private Duration commandTimeout = Duration.ofSeconds(5);

    /**
     * The DataSource bean name.
     *
     * @return the bean name, or null
     */
    public String getDataSource() {
      return dataSource;
    }

    /**
     * Sets the DataSource bean name.
     *
     * @param dataSource the bean name
     */
    public void setDataSource(String dataSource) {
      this.dataSource = dataSource;
    }

    /**
     * The table.
     *
     * @return the table
     */
    public String getTable() {
      return table;
    }

    /**
     * Sets the table.
     *
     * @param table the table
     */
    public void setTable(String table) {
      this.table = table;
    }

    /**
     * The mode name.
     *
     * @return the mode name
     */
    public String getMode() {
      return mode;
    }

    /**
     * Sets the mode name.
     *
     * @param mode the mode name
     */
    public void setMode(String mode) {
      this.mode = mode;
    }

    /**
     * Whether to create the table.
     *
     * @return true to create it when missing
     */
    public boolean isCreateTable() {
      return createTable;
    }

    /**
     * Sets whether to create the table.
     *
     * @param createTable true to create it when missing
     */
    public void setCreateTable(boolean createTable) {
      this.createTable = createTable;
    }

    /**
     * The command timeout.
     *
     * @return the command timeout
     */
    public Duration getCommandTimeout() {
      return commandTimeout;
    }

    /**
     * Sets the command timeout.
     *
     * @param commandTimeout the command timeout
     */
    public void setCommandTimeout(Duration commandTimeout) {
      this.commandTimeout = commandTimeout;
    }
  }
}
