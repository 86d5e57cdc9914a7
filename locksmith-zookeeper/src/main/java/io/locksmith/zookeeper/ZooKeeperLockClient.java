package io.locksmith.zookeeper;

import io.locksmith.BackendConfigurationException;
import io.locksmith.ClientOptions;
import io.locksmith.DistributedLock;
import io.locksmith.DistributedReadWriteLock;
import io.locksmith.DistributedSemaphore;
import io.locksmith.LockClient;
import io.locksmith.LockInfo;
import io.locksmith.LockOptions;
import io.locksmith.internal.DefaultLockClient;
import io.locksmith.internal.ForwardingLockClient;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.RetryPolicy;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Locks on a ZooKeeper ensemble, through Curator framework (not Curator's lock recipes).
 *
 * <pre>{@code
 * try (ZooKeeperLockClient locks = ZooKeeperLockClient.create("zookeeper://zk1:2181,zk2:2181,zk3:2181/apps")) {
 *   try (Lease lease = locks.lock("invoice-42").acquire(Duration.ofSeconds(5))) {
 *     store.write(invoice, lease.fencingToken());
 *   }
 * }
 * }</pre>
 *
 * <p><b>How it works.</b> A lock name is a parent node; every acquisition creates one
 * ephemeral-sequential child under it, named with this client's id and a digest of the owner (so a
 * create whose reply was lost is found again, never left behind as an orphan). The children in sequence
 * order are the queue: the first holds an exclusive or fair lock, and each waiter watches only the node
 * just ahead of it, so a release wakes exactly one waiter. An uncontended acquire is a create and a
 * listing, a release one delete. Lock parents are container nodes, which the server removes once empty.
 *
 * <p><b>Lock kinds.</b> {@link #lock(String)}, {@link #fairLock(String)} (both grant in arrival order; they
 * are different locks of the same name), {@link #readWriteLock(String)} (a writer waits for the readers
 * ahead of it and keeps later readers out; downgrade allowed, upgrade refused) and {@link
 * #semaphore(String, int)} (the first {@code permits} nodes hold).
 *
 * <p><b>Fencing tokens</b> are the lock node's creation zxid: ZooKeeper's transaction id, which the
 * ensemble's consensus log makes strictly increasing across every grant of a name, through leader
 * changes and restarts of the whole ensemble ({@link io.locksmith.FencingGuarantee#STRICT}); not across
 * the loss of the ensemble's history (data wiped, or restored from an older snapshot), after which they
 * start below those already issued (see {@code docs/zookeeper.md}). They are
 * not consecutive: every write in the ensemble takes a zxid. A read lease carries the token of the last
 * write lease of its lock.
 *
 * <p><b>Leases and loss.</b> The session is the lease on the server: a holder whose process dies keeps
 * its nodes until its session expires ({@link Builder#sessionTimeout(Duration)}). The lease the core asks
 * for is kept by this client: a fixed lease's node is deleted when the lease runs out, a watched lease is
 * renewed by checking that its node is still there. When this client can no longer prove that its
 * session lives (no answer through the leader), every lease of it is lost no later than the earliest
 * moment the leader could have expired the session: the send time of the last request answered through
 * the leader (a {@code sync} heartbeat, a create), plus the negotiated session timeout, less half the
 * servers' tick ({@link Builder#serverTickTime(Duration)}) and the clock-drift and scheduling allowances
 * of {@link ClientOptions#validityMarginFor(Duration)}; see {@code docs/zookeeper.md}.
 *
 * <p><b>Failure.</b> Every operation has the connection timeout as its deadline. An ensemble that cannot
 * be reached fails acquisition with {@link io.locksmith.BackendUnavailableException} (waiting
 * acquisitions try again until their wait runs out); credentials or ACLs that do not fit, and TLS
 * certificates that are not trusted or not accepted, fail {@link Builder#build()} with {@link
 * BackendConfigurationException}; a malformed URI or setting fails it with {@link IllegalArgumentException}.
 *
 * <p><b>Security.</b> {@link Builder#tls(ZooKeeperTls)} connects with TLS and {@link
 * Builder#saslLoginContext(String)} logs in with SASL, both configured for this client alone. A client
 * the server knows by an identity (digest credentials, a TLS client certificate, SASL)
 * creates its nodes with {@code CREATOR_ALL_ACL}, so no other client can delete a holder's node; {@link
 * Builder#nodeAcl(List)} chooses another ACL.
 *
 * <p><b>Names.</b> Any valid lock name ({@link LockClient}) is accepted and encoded into one node name
 * (slashes, dots and non-ASCII characters escaped), so no name can reach another path; a name whose
 * encoding is longer than 8192 characters is refused with {@link IllegalArgumentException}.
 *
 * <p>Thread-safe; create one per application and close it at shutdown. Closing deletes this client's
 * nodes and ends its threads; a {@code CuratorFramework} given to the builder is left open.
 */
public final class ZooKeeperLockClient extends ForwardingLockClient {
  private static final Logger log = LoggerFactory.getLogger(ZooKeeperLockClient.class);
  /** Default session timeout, 15 s: how long the nodes of a process that died outlive it. */
  public static final Duration DEFAULT_SESSION_TIMEOUT = Duration.ofSeconds(15);
  /** Default connection timeout, 5 s: the bound on connecting and on every operation. */
  public static final Duration DEFAULT_CONNECTION_TIMEOUT = Duration.ofSeconds(5);
  /** Default longest interval between a waiter's own re-checks, 30 s. */
  public static final Duration DEFAULT_WAITER_RECHECK = Duration.ofSeconds(30);
  private static final AtomicInteger THREADS = new AtomicInteger();

  private final String description;
  /** For tests and diagnostics in this package. */
  final ZooKeeperBackend backend;

  private ZooKeeperLockClient(DefaultLockClient delegate, ZooKeeperBackend backend, String description) {
    super(delegate);
    this.backend = backend;
    this.description = description;
  }

  /**
   * Connects with default options.
   *
   * @param uri {@code zookeeper://[user:password@]host[:port][,host[:port]…][/chroot]}
   * @return a connected client
   * @throws NullPointerException if {@code uri} is null
   * @throws IllegalArgumentException if {@code uri} is malformed
   * @throws BackendConfigurationException if no host resolves, or the credentials or ACLs do not fit
   * @throws io.locksmith.BackendUnavailableException if no server answers within the connection timeout
   */
  public static ZooKeeperLockClient create(String uri) {
    return builder().uri(uri).build();
  }

  /** @return a builder with the defaults */
  public static Builder builder() {
    return new Builder();
  }

  /** @return where the client connects, without credentials, e.g. {@code zookeeper://zk1:2181,zk2:2181/apps} */
  public String serverDescription() {
    return description;
  }

  private static String checked(String name) {
    NodeNames.encode(name); // refuses a name too long for one node
    return name;
  }

  @Override
  public DistributedLock lock(String name) {
    DistributedLock lock = super.lock(name);
    checked(name);
    return lock;
  }

  @Override
  public DistributedLock lock(String name, LockOptions options) {
    DistributedLock lock = super.lock(name, options);
    checked(name);
    return lock;
  }

  @Override
  public DistributedLock fairLock(String name, LockOptions options) {
    DistributedLock lock = super.fairLock(name, options);
    checked(name);
    return lock;
  }

  @Override
  public DistributedReadWriteLock readWriteLock(String name, LockOptions options) {
    DistributedReadWriteLock lock = super.readWriteLock(name, options);
    checked(name);
    return lock;
  }

  @Override
  public DistributedSemaphore semaphore(String name, int permits, LockOptions options) {
    DistributedSemaphore semaphore = super.semaphore(name, permits, options);
    checked(name);
    return semaphore;
  }

  @Override
  public Optional<LockInfo> inspect(String name) {
    io.locksmith.internal.LockNames.validate(name, options().maxNameLength());
    return super.inspect(checked(name));
  }

  @Override
  public boolean forceUnlock(String name) {
    io.locksmith.internal.LockNames.validate(name, options().maxNameLength());
    return super.forceUnlock(checked(name));
  }

  @Override
  public String toString() {
    return "ZooKeeperLockClient[" + description + ", id=" + clientId() + "]";
  }

  /** Builds a {@link ZooKeeperLockClient}; not thread-safe. Everything is validated by {@link #build()}. */
  public static final class Builder {
    private String uri;
    private CuratorFramework curator;
    private Duration sessionTimeout = DEFAULT_SESSION_TIMEOUT;
    private Duration connectionTimeout = DEFAULT_CONNECTION_TIMEOUT;
    private Duration waiterRecheck = DEFAULT_WAITER_RECHECK;
    private Duration serverTickTime;
    private RetryPolicy retryPolicy;
    private String digest;
    private List<ACL> nodeAcl;
    private ZooKeeperTls tls;
    private String saslLoginContext;
    private ClientOptions options = ClientOptions.defaults();

    private Builder() {}

    /**
     * The ensemble: {@code zookeeper://[user:password@]host[:port][,host[:port]…][/chroot]}. Port 2181 if
     * omitted; the chroot is a path every node of this client lives under (created if missing); user and
     * password (percent-encoded) are digest credentials, as {@link #digest(String, String)}. Not
     * together with {@link #curator(CuratorFramework)}.
     *
     * @param uri the URI, checked by {@link #build()}
     * @return this builder
     */
    public Builder uri(String uri) {
      this.uri = uri;
      return this;
    }

    /**
     * Uses a {@code CuratorFramework} the application already runs, instead of connecting by URI. The
     * client starts it if it is not started, uses its connection, namespace, retry policy and
     * credentials, and does not close it: {@link ZooKeeperLockClient#close()} deletes this client's
     * nodes through it and leaves it open. The session settings of this builder do not apply. If the
     * framework authenticates, this client's nodes get {@code CREATOR_ALL_ACL} whatever its ACL provider
     * says, unless {@link #nodeAcl(List)} is given.
     *
     * @param curator the framework
     * @return this builder
     */
    public Builder curator(CuratorFramework curator) {
      this.curator = curator;
      return this;
    }

    /**
     * The session timeout asked of the ensemble (which may clamp it): how long the nodes of a process
     * that died, or was cut off, outlive it, and so the time after which this client declares its leases
     * lost when it cannot reach the ensemble.
     *
     * @param timeout default 15 s, 100 ms to 10 min
     * @return this builder
     */
    public Builder sessionTimeout(Duration timeout) {
      this.sessionTimeout = timeout;
      return this;
    }

    /**
     * @param timeout bound on connecting at {@link #build()} and on every operation; default 5 s, 10 ms
     *     to 5 min
     * @return this builder
     */
    public Builder connectionTimeout(Duration timeout) {
      this.connectionTimeout = timeout;
      return this;
    }

    /**
     * @param policy Curator's retry policy for operations whose connection dropped; default exponential
     *     backoff from 100 ms, at most 3 retries (each operation still fails after the connection
     *     timeout)
     * @return this builder
     */
    public Builder retryPolicy(RetryPolicy policy) {
      this.retryPolicy = policy;
      return this;
    }

    /**
     * Authenticates with ZooKeeper's {@code digest} scheme. The nodes this client creates are then
     * readable and writable by that user only ({@code CREATOR_ALL_ACL}); operators inspecting or
     * unlocking them need the same credentials.
     *
     * @param user the user, without {@code ':'}
     * @param password the password
     * @return this builder
     */
    public Builder digest(String user, String password) {
      Objects.requireNonNull(user, "user");
      Objects.requireNonNull(password, "password");
      if (user.isEmpty() || user.indexOf(':') >= 0) {
        throw new IllegalArgumentException("a digest user is non-empty and has no ':'");
      }
      this.digest = user + ":" + password;
      return this;
    }

    /**
     * The ACL of every node this client creates (the chroot and kind directories, lock parents, lock
     * nodes), instead of the default: {@code CREATOR_ALL_ACL} when the server knows the client by an
     * identity (digest credentials, or a TLS client certificate: ZooKeeper's {@code x509} scheme), else
     * the framework's ACL provider (world-open for a client built from a URI). Every client that shares
     * the namespace needs create, read and delete on these nodes, and operators who force-unlock need
     * delete; an ACL that does not allow this client what it needs fails {@link #build()}.
     *
     * @param acl the entries, checked by {@link #build()} (not empty, no null entry)
     * @return this builder
     */
    public Builder nodeAcl(List<ACL> acl) {
      this.nodeAcl = acl;
      return this;
    }

    /**
     * Connects with TLS, with these settings for this client alone (ZooKeeper's {@code ZKClientConfig}
     * of its own, no JVM-wide system property). The URI must name the servers' secure client port
     * ({@code secureClientPort}). Not together with {@link #curator(CuratorFramework)}, whose own
     * configuration decides.
     *
     * @param tls the trust store, client certificate and host name check
     * @return this builder
     */
    public Builder tls(ZooKeeperTls tls) {
      this.tls = tls;
      return this;
    }

    /**
     * Authenticates with SASL (Kerberos, or SASL DIGEST-MD5), logging in with the section {@code section}
     * of the JVM's JAAS configuration ({@code java.security.auth.login.config}). The JAAS file is the JVM's,
     * as for every JAAS user; the section is this client's own (a {@code ZKClientConfig} of its own, no
     * JVM-wide property), so clients of one JVM can log in as different users. The client's nodes then get
     * {@code CREATOR_ALL_ACL} for the SASL identity. Not together with {@link #curator(CuratorFramework)}.
     *
     * @param section the JAAS login section, checked by {@link #build()}
     * @return this builder
     */
    public Builder saslLoginContext(String section) {
      this.saslLoginContext = section;
      return this;
    }

    /**
     * @param interval longest time a waiter goes without re-checking by itself (a backstop: waiters are
     *     woken by watches); default 30 s, 10 ms to 1 h
     * @return this builder
     */
    public Builder waiterRecheck(Duration interval) {
      this.waiterRecheck = interval;
      return this;
    }

    /**
     * The ensemble's {@code tickTime}, for the loss bound: a client connected to a follower is reported to
     * the leader every half tick, so the leader may have last heard of the session up to half a tick
     * before this client's last proof, and the client declares its leases lost that much earlier (see
     * {@code docs/zookeeper.md}, "Leases and loss"). Not declared, the client assumes the largest tick
     * that ZooKeeper's default minimum session timeout (two ticks) allows for the negotiated timeout:
     * half of it. Declaring a tick larger than the real one is safe; a smaller one is not.
     *
     * @param tick the servers' tick; 1 ms to 1 min
     * @return this builder
     */
    public Builder serverTickTime(Duration tick) {
      this.serverTickTime = tick;
      return this;
    }

    /**
     * @param options namespace, name limits, default lease policy, clock-drift allowance, client name
     * @return this builder
     */
    public Builder options(ClientOptions options) {
      this.options = options;
      return this;
    }

    /**
     * Connects and prepares the lock directories.
     *
     * @return a connected client
     * @throws NullPointerException if neither a URI nor a {@code CuratorFramework} was given, or a setting
     *     is null
     * @throws IllegalArgumentException if the URI is malformed, both a URI (or its retry policy,
     *     credentials or TLS settings) and a {@code CuratorFramework} were given, a setting is out of range,
     *     or the node ACL is empty
     * @throws BackendConfigurationException if no host of the URI resolves, the ensemble refuses the
     *     credentials or the ACLs of the lock directories, or (with {@link #tls(ZooKeeperTls)}) the TLS
     *     handshake fails: the server's certificate is not trusted or does not name the host, the server
     *     refuses the client's certificate, or the port does not serve TLS; or the SASL login section is
     *     missing from the JAAS configuration, or the server refuses the SASL login
     * @throws io.locksmith.BackendUnavailableException if no server answers within the connection timeout
     */
    public ZooKeeperLockClient build() {
      Objects.requireNonNull(options, "options");
      Objects.requireNonNull(sessionTimeout, "sessionTimeout");
      Objects.requireNonNull(connectionTimeout, "connectionTimeout");
      Objects.requireNonNull(waiterRecheck, "waiterRecheck");
      within("sessionTimeout", sessionTimeout, Duration.ofMillis(100), Duration.ofMinutes(10));
      within("connectionTimeout", connectionTimeout, Duration.ofMillis(10), Duration.ofMinutes(5));
      within("waiterRecheck", waiterRecheck, Duration.ofMillis(10), Duration.ofHours(1));
      if (options.validityMarginFor(sessionTimeout).compareTo(sessionTimeout) >= 0) {
        throw new IllegalArgumentException("sessionTimeout " + sessionTimeout + " is not longer than the part of "
            + "it the holder does not count on: clock-drift allowance " + options.driftFor(sessionTimeout)
            + " + schedulingAllowance " + options.schedulingAllowance() + " (ClientOptions)");
      }
      if (serverTickTime != null) {
        within("serverTickTime", serverTickTime, Duration.ofMillis(1), Duration.ofMinutes(1));
      }
      if (curator != null && (uri != null || digest != null || retryPolicy != null || tls != null
          || saslLoginContext != null)) {
        throw new IllegalArgumentException("give either a CuratorFramework or a URI (with its retry policy,"
            + " credentials and TLS settings), not both");
      }
      if (saslLoginContext != null) {
        saslSection(saslLoginContext);
      }
      if (nodeAcl != null) {
        if (nodeAcl.isEmpty() || nodeAcl.contains(null)) {
          throw new IllegalArgumentException("nodeAcl must have at least one entry and no null entry");
        }
        nodeAcl = List.copyOf(nodeAcl);
      }
      ZooKeeperBackend.Settings settings;
      ZooKeeperUris.Parsed parsed = curator == null ? ZooKeeperUris.parse(Objects.requireNonNull(uri, "uri")) : null;
      String base = (parsed == null ? "" : parsed.chroot()) + "/" + options.namespace();
      try {
        org.apache.zookeeper.common.PathUtils.validatePath(base);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("chroot and namespace make '" + base + "', not a valid ZooKeeper path: "
            + e.getMessage(), e);
      }
      if (curator != null) {
        boolean start = curator.getState() == org.apache.curator.framework.imps.CuratorFrameworkState.LATENT;
        if (start) {
          curator.start();
        }
        settings = new ZooKeeperBackend.Settings(curator, false, "", Duration.ofMillis(sessionTimeoutOf(curator)),
            connectionTimeout, waiterRecheck, options::validityMarginFor, "the application's CuratorFramework", nodeAcl,
            serverTickTime);
      } else {
        String auth = digest;
        if (parsed.user() != null) {
          if (auth != null) {
            throw new IllegalArgumentException("credentials in the URI and digest() given both");
          }
          auth = parsed.user() + ":" + parsed.password();
        }
        resolve(parsed);
        CuratorFrameworkFactory.Builder b = CuratorFrameworkFactory.builder()
            .connectString(parsed.connectString())
            .sessionTimeoutMs((int) sessionTimeout.toMillis())
            .connectionTimeoutMs((int) connectionTimeout.toMillis())
            .retryPolicy(retryPolicy != null ? retryPolicy : new ExponentialBackoffRetry(100, 3, 1000))
            .ensembleTracker(false)
            .waitForShutdownTimeoutMs((int) Math.min(5000, connectionTimeout.toMillis() + 1000))
            .threadFactory(r -> {
              Thread t = new Thread(r, "locksmith-zk-curator-" + THREADS.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
        if (auth != null) {
          b.authorization("digest", auth.getBytes(StandardCharsets.UTF_8)).aclProvider(new CreatorOnly());
        }
        org.apache.zookeeper.client.ZKClientConfig config = null;
        if (tls != null) {
          tls.probe(parsed.hosts(), connectionTimeout, parsed.description());
          config = tls.clientConfig();
        }
        if (saslLoginContext != null) {
          config = config != null ? config : new org.apache.zookeeper.client.ZKClientConfig();
          config.setProperty(org.apache.zookeeper.client.ZKClientConfig.ENABLE_CLIENT_SASL_KEY, "true");
          config.setProperty(org.apache.zookeeper.client.ZKClientConfig.LOGIN_CONTEXT_NAME_KEY, saslLoginContext);
        }
        if (config != null) {
          b.zkClientConfig(config);
        }
        settings = new ZooKeeperBackend.Settings(b.build(), true, parsed.chroot(), sessionTimeout, connectionTimeout,
            waiterRecheck, options::validityMarginFor, parsed.description(), nodeAcl, serverTickTime);
      }
      ZooKeeperBackend backend = new ZooKeeperBackend(settings);
      DefaultLockClient delegate = new DefaultLockClient(backend, options);
      ZooKeeperLockClient client = new ZooKeeperLockClient(delegate, backend, settings.description());
      log.info("ZooKeeper lock client {} started on {} (namespace '{}'{}, session {} ms negotiated)", client.clientId(),
          settings.description(), options.namespace(), options.clientName().map(n -> ", name '" + n + "'").orElse(""),
          backend.sessions().timeout(backend.currentSession()).toMillis());
      return client;
    }

    /**
     * The framework's session timeout if its handle knows it; until the handle connects it reports 0,
     * and the default stands in (the backend reads the negotiated timeout once connected and works with
     * that one only).
     */
    private static long sessionTimeoutOf(CuratorFramework curator) {
      try {
        int negotiated = curator.getZookeeperClient().getZooKeeper().getSessionTimeout();
        return negotiated > 0 ? negotiated : DEFAULT_SESSION_TIMEOUT.toMillis();
      } catch (Exception e) {
        return DEFAULT_SESSION_TIMEOUT.toMillis();
      }
    }

    /** A SASL login section that is not there would make ZooKeeper's client carry on unauthenticated. */
    private static void saslSection(String section) {
      if (section.isBlank()) {
        throw new IllegalArgumentException("saslLoginContext must name a JAAS login section");
      }
      javax.security.auth.login.AppConfigurationEntry[] entries;
      try {
        entries = javax.security.auth.login.Configuration.getConfiguration().getAppConfigurationEntry(section);
      } catch (SecurityException e) {
        throw new BackendConfigurationException("cannot read the JVM's JAAS configuration ("
            + System.getProperty("java.security.auth.login.config") + ") for SASL: " + e.getMessage(), e);
      }
      if (entries == null || entries.length == 0) {
        throw new BackendConfigurationException("the JVM's JAAS configuration (java.security.auth.login.config="
            + System.getProperty("java.security.auth.login.config") + ") has no login section '" + section
            + "' for SASL");
      }
    }

    private static void within(String what, Duration d, Duration min, Duration max) {
      if (d.compareTo(min) < 0 || d.compareTo(max) > 0) {
        throw new IllegalArgumentException(what + " must be from " + min + " to " + max + ", was " + d);
      }
    }

    /** ZooKeeper skips hosts that do not resolve and retries forever if none does: say so at once. */
    private static void resolve(ZooKeeperUris.Parsed parsed) {
      List<String> unknown = new ArrayList<>();
      for (String hostPort : parsed.hosts()) {
        String host = hostPort.substring(0, hostPort.lastIndexOf(':'));
        if (host.startsWith("[")) {
          continue;
        }
        try {
          InetAddress.getAllByName(host);
        } catch (UnknownHostException e) {
          unknown.add(host);
        }
      }
      if (unknown.size() == parsed.hosts().size()) {
        throw new BackendConfigurationException("no host of " + parsed.description() + " resolves: unknown host(s) "
            + unknown);
      }
      if (!unknown.isEmpty()) {
        log.warn("ZooKeeper host(s) {} of {} do not resolve; using the others", unknown, parsed.description());
      }
    }
  }

  /** Nodes readable and writable by their creator only (the digest user). */
  private static final class CreatorOnly implements ACLProvider {
    @Override
    public List<ACL> getDefaultAcl() {
      return ZooDefs.Ids.CREATOR_ALL_ACL;
    }

    @Override
    public List<ACL> getAclForPath(String path) {
      return ZooDefs.Ids.CREATOR_ALL_ACL;
    }
  }
}
