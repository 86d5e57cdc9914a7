package io.locksmith.redis;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.resource.ClientResources;
import io.locksmith.ClientOptions;
import io.locksmith.internal.DefaultLockClient;
import io.locksmith.internal.ForwardingLockClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.StringJoiner;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Locks on Redis, through Lettuce: one master you address directly, the master of a Redis Sentinel
 * deployment that the client finds through the sentinels, or a Redis Cluster
 * ({@code redis-cluster://host1:port1,host2:port2}).
 *
 * <pre>{@code
 * try (RedisLockClient locks = RedisLockClient.create("redis://localhost:6379")) {
 *   try (Lease lease = locks.lock("invoice-42").acquire(Duration.ofSeconds(5))) {
 *     store.write(invoice, lease.fencingToken());
 *   }
 * }
 * }</pre>
 *
 * <p><b>How it works.</b> A lock is one string key {@code token|holds|run|flags|owner} whose TTL is the
 * lease (Redis 6.2 or later).
 * Uncontended acquire and release are one {@code EVALSHA} each. A refused acquire registers the waiter
 * in the same script; a release wakes exactly one registered waiter through this client's single
 * pub/sub channel (no pattern subscriptions, no herd). A waiter re-checks by itself when the holder's
 * lease would run out, or after {@link Builder#waiterRecheck(Duration)}, whichever is sooner, so a lost
 * message or a waiter that died in the queue costs at most that long.
 *
 * <p><b>Fair lock.</b> {@link #fairLock(String)} grants in order of arrival at the server: waiters are
 * queued by server time, a release wakes only the first, and a waiter that dies in the queue loses its
 * place after {@link Builder#fairQueueTimeout(Duration)}. See {@code docs/fair-lock.md}.
 *
 * <p><b>Fencing tokens</b> are {@code max(last token + 1, server time in µs)}, minted inside the
 * acquire script ({@link io.locksmith.FencingGuarantee#CLOCK_FLOORED}). The counter alone could go
 * backwards if Redis restarts without persistence or fails over to a replica that missed the last
 * grant; the time floor keeps tokens increasing then too, unless the serving node's clock is behind the
 * clock that minted the last token. Resources must still compare tokens, not trust the lock alone.
 *
 * <p><b>Failure.</b> Every command has {@link Builder#commandTimeout(Duration)}; while the connection
 * is down commands fail at once rather than queue. An unreachable server fails acquisition with
 * {@link io.locksmith.BackendUnavailableException}; held watched leases go
 * {@link io.locksmith.LeaseState#UNCERTAIN}, then {@link io.locksmith.LeaseState#LOST} when their
 * validity runs out. A configuration that does not fit the server (TLS trust or host name, a port that
 * does not serve TLS, an unknown host, rejected credentials, missing ACL permissions) fails with {@link
 * io.locksmith.BackendConfigurationException}, which is not transient; a malformed URI fails {@link
 * Builder#build()} with {@link IllegalArgumentException}.
 *
 * <p><b>TLS</b> with a {@code rediss} URI; trusted CAs, a client certificate and host name verification
 * come from {@link Builder#tls(RedisTls)}.
 *
 * <p><b>Identity.</b> Every connection names itself ({@code CLIENT SETNAME locksmith:<clientId>}, with
 * {@code @<clientName>} when {@link ClientOptions.Builder#clientName(String)} is set), and owner ids
 * start with the client id, so {@code CLIENT LIST} leads from a lock's owner to the process. The client
 * logs one INFO line when it has started.
 *
 * <p><b>Sentinel.</b> With a {@code redis-sentinel://} URI every connection and every reconnection
 * asks the sentinels for the current master, and a command timeout or a {@code READONLY} reply makes
 * the client check whether they now name another node (a hung master keeps its connections open); so
 * after a failover the client continues on the promoted replica, once it has found out by a failed
 * command. Replication is asynchronous: a grant that had not reached the promoted replica is gone
 * there. The holder's next renewal finds that out and the lease becomes
 * {@link io.locksmith.LeaseState#LOST}, but until then another client may be granted the same lock.
 * Fence the protected resource.
 *
 * <p><b>Cluster.</b> With a {@code redis-cluster://} URI the client learns the slot map from the seed
 * nodes and sends each lock's scripts to the master of the lock's slot (all keys of one lock share a hash
 * tag, so locks spread over the masters by name). Lettuce follows {@code MOVED} and {@code ASK} and
 * refreshes the slot map periodically and after redirects or lost nodes; renewals are batched per slot.
 * Wake-ups use classic pub/sub, which a cluster broadcasts to every node. A failover can lose a grant the
 * promoted replica had not received, exactly as with Sentinel: fence the protected resource.
 *
 * <p>Thread-safe; create one per application and close it at shutdown.
 */
public final class RedisLockClient extends ForwardingLockClient {
  private static final Logger log = LoggerFactory.getLogger(RedisLockClient.class);
  /** Default command timeout, 2 s. */
  public static final Duration DEFAULT_COMMAND_TIMEOUT = Duration.ofSeconds(2);
  /** Default longest interval between a waiter's own re-checks, 5 s. */
  public static final Duration DEFAULT_WAITER_RECHECK = Duration.ofSeconds(5);
  /** Default retention of a lock name's last fencing token after its last grant, 24 h. */
  public static final Duration DEFAULT_FENCE_RETENTION = Duration.ofHours(24);
  /** Default time a fair lock waiter's place outlives its last attempt, 5 s. */
  public static final Duration DEFAULT_FAIR_QUEUE_TIMEOUT = Duration.ofSeconds(5);
  /**
   * Longest command timeout accepted, 5 min: a server that has not answered in minutes is gone for
   * this purpose, and renewals must learn that within a lease.
   */
  public static final Duration MAX_COMMAND_TIMEOUT = Duration.ofMinutes(5);
  /**
   * Longest {@link Builder#waiterRecheck(Duration) waiter re-check} and
   * {@link Builder#fairQueueTimeout(Duration) fair queue timeout} accepted, 1 h: both bound how long a
   * lost wake-up or a dead waiter costs, so longer ones would defeat their purpose.
   */
  public static final Duration MAX_WAITER_RECHECK = Duration.ofHours(1);
  /**
   * Longest fence retention accepted, 3650 days (about 10 years). Redis keeps it as {@code SET … PX},
   * whose expiry (now + retention, in ms) must fit a signed 64-bit integer; an absurd retention
   * overflowed it and the fence key expired at once. Ten years is "kept for good" in practice.
   */
  public static final Duration MAX_FENCE_RETENTION = Duration.ofDays(3650);

  private final String description;

  /** For tests and diagnostics in this package. */
  final RedisBackend backend;

  private RedisLockClient(Builder b, RedisBackend backend) {
    super(new DefaultLockClient(backend, b.options));
    this.backend = backend;
    this.description = b.clusterSeeds != null ? RedisClusterConnections.describe(b.clusterSeeds)
        : describe(b.redisUri);
  }

  /**
   * Connects with default options.
   *
   * @param uri {@code redis://[user:password@]host[:port][/db]}, {@code rediss://…} for TLS, a
   *     Sentinel URI or a Cluster URI (see {@link Builder#uri(String)})
   * @return a connected client
   * @throws NullPointerException if {@code uri} is null
   * @throws IllegalArgumentException if {@code uri} is not a Redis, Redis Sentinel or Redis Cluster URI
   * @throws io.locksmith.BackendConfigurationException if the configuration does not fit the server
   *     (TLS, unknown host, credentials): see {@link Builder#build()}
   * @throws io.locksmith.BackendUnavailableException if the server cannot be reached within the
   *     command timeout (on a Cluster: if no seed node answers)
   * @throws io.locksmith.LockException if the server refuses the connection for another reason
   * @throws IllegalStateException if the Lettuce on the class path is older than this module supports
   */
  public static RedisLockClient create(String uri) {
    return builder().uri(uri).build();
  }

  private static RedisBackend backend(Builder b) {
    RedisBackend backend = b.clusterSeeds != null
        ? new RedisBackend(b.clusterSeeds, b.commandTimeout, b.waiterRecheck, b.fenceRetention)
        : new RedisBackend(b.redisUri, b.commandTimeout, b.waiterRecheck, b.fenceRetention);
    if (b.replicaAcks > 0) {
      backend.replicaAcknowledgement(b.replicaAcks, b.replicaAckTimeout,
          b.replicaAckPolicy == ReplicaAckPolicy.REQUIRE);
    }
    backend.fair.queueTimeout(b.fairQueueTimeout);
    // for a rediss URI without settings the defaults still bound the handshake by the command timeout
    backend.tls(b.tls != null ? b.tls : RedisTls.defaults());
    ClientResources shared = b.sharedResources();
    if (shared != null) {
      backend.shareResources(shared);
    }
    return backend;
  }

  /** @return a builder with the defaults */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * @return the server address without credentials, e.g. {@code redis://host:6379/2}; for Sentinel
   *     {@code redis-sentinel://s1:26379,s2:26379?sentinelMasterId=mymaster} (the sentinels and the
   *     master name, not the master's current address); for a Cluster
   *     {@code redis-cluster://h1:7000,h2:7000} (the seed nodes as given, not the current masters)
   */
  public String serverDescription() {
    return description;
  }

  /**
   * The INFO line a client logs when it has connected: its id, where, namespace, name and TLS settings;
   * never credentials (the description has none, and {@link RedisTls#toString()} shows no password).
   */
  static String startMessage(String kind, String clientId, String where, ClientOptions options, RedisTls tls) {
    return kind + " lock client " + clientId + " started on " + where + " (namespace '" + options.namespace() + "'"
        + options.clientName().map(n -> ", name '" + n + "'").orElse("") + (tls != null ? ", " + tls : "") + ")";
  }

  /** The URI without user or password: safe for logs and exception messages. */
  static String describe(RedisURI uri) {
    String db = uri.getDatabase() != 0 ? "/" + uri.getDatabase() : "";
    if (uri.getSentinels().isEmpty()) {
      return (uri.isSsl() ? "rediss://" : "redis://") + uri.getHost() + ":" + uri.getPort() + db;
    }
    StringJoiner sentinels = new StringJoiner(",", uri.isSsl() ? "rediss-sentinel://" : "redis-sentinel://",
        db + "?sentinelMasterId=" + uri.getSentinelMasterId());
    for (RedisURI sentinel : uri.getSentinels()) {
      sentinels.add(sentinel.getHost() + ":" + sentinel.getPort());
    }
    return sentinels.toString();
  }

  static boolean isSentinel(RedisURI uri) {
    return !uri.getSentinels().isEmpty();
  }

  @Override
  public String toString() {
    return "RedisLockClient[" + serverDescription() + ", id=" + clientId() + "]";
  }

  /** Builds a {@link RedisLockClient}; not thread-safe. Everything is validated by {@link #build()}. */
  public static final class Builder {
    private String uri;
    private RedisURI redisUri;
    private List<RedisURI> clusterSeeds;
    private Duration commandTimeout = DEFAULT_COMMAND_TIMEOUT;
    private Duration waiterRecheck = DEFAULT_WAITER_RECHECK;
    private Duration fenceRetention = DEFAULT_FENCE_RETENTION;
    private Duration fairQueueTimeout = DEFAULT_FAIR_QUEUE_TIMEOUT;
    private ClientOptions options = ClientOptions.defaults();
    private int replicaAcks;
    private Duration replicaAckTimeout;
    private ReplicaAckPolicy replicaAckPolicy;
    private RedisTls tls;
    private ClientResources clientResources;
    private AbstractRedisClient redisClient;

    private Builder() {}

    /**
     * The server to use, one of:
     *
     * <ul>
     *   <li>{@code redis://[[user:]password@]host[:port][/db]}, or {@code rediss://…} for TLS;
     *   <li>{@code redis-sentinel://[[user:]password@]host1[:port1][,host2[:port2]…][/db]?sentinelMasterId=name}
     *       for the master that Redis Sentinel monitors under {@code name}, or
     *       {@code rediss-sentinel://…} for TLS to the sentinels and the master. The hosts are
     *       sentinels (default port 26379); list several so the client can ask another when one is
     *       down.
     *   <li>{@code redis-cluster://[[user:]password@]host1[:port1][,host2[:port2]…]} for a Redis
     *       Cluster, or {@code rediss-cluster://…} for TLS to every node. The hosts are seed nodes
     *       (default port 6379), any of which may be a master or a replica; the client learns the
     *       others from the first seed that answers. List several so the client can start while one is
     *       down. No database (a cluster has only database 0) and no query options.
     * </ul>
     *
     * <p>User and password authenticate with the data node (a Redis 6+ ACL user, or {@code
     * requirepass}); in a Sentinel URI they are not sent to the sentinels, which must therefore
     * accept clients without a password. In a Cluster URI they are used for every node.
     *
     * @param uri the URI, checked by {@link #build()}
     * @return this builder
     */
    public Builder uri(String uri) {
      this.uri = uri;
      return this;
    }

    /**
     * @param timeout bound on every command and on connecting; default 2 s, 1 ms to
     *     {@link #MAX_COMMAND_TIMEOUT}
     * @return this builder
     */
    public Builder commandTimeout(Duration timeout) {
      this.commandTimeout = timeout;
      return this;
    }

    /**
     * @param interval longest time a waiter goes without re-checking by itself (a backstop for a lost
     *     wake-up or a waiter that died in the queue); default 5 s, 10 ms to {@link #MAX_WAITER_RECHECK}
     * @return this builder
     */
    public Builder waiterRecheck(Duration interval) {
      this.waiterRecheck = interval;
      return this;
    }

    /**
     * @param retention how long a lock name's last token is kept after its last grant; past it, tokens
     *     rest on the time floor alone; default 24 h, 1 s to {@link #MAX_FENCE_RETENTION}
     * @return this builder
     */
    public Builder fenceRetention(Duration retention) {
      this.fenceRetention = retention;
      return this;
    }

    /**
     * How long a {@linkplain io.locksmith.LockClient#fairLock(String) fair lock} waiter keeps its place
     * in the queue after its last attempt. A waiting acquisition re-attempts at least every third of
     * this, which keeps its place; a waiter that died or gave up without saying so loses its place
     * when it runs out, so it delays the waiters behind it by at most this long. Shorter means dead
     * waiters cost less and live ones re-attempt more often; keep it well above the command round
     * trip (a waiter stalled longer than this, e.g. by a GC pause, goes back to the end of the queue).
     * Clients of one lock should use the same value.
     *
     * @param timeout the place timeout; default 5 s, 100 ms to {@link #MAX_WAITER_RECHECK}
     * @return this builder
     */
    public Builder fairQueueTimeout(Duration timeout) {
      this.fairQueueTimeout = timeout;
      return this;
    }

    /**
     * Opt-in: after each fresh grant, wait until {@code replicas} replicas of the master have it
     * ({@code WAIT}), for at most {@code timeout}. This narrows the window in which a failover to a
     * replica loses the grant; it does not close it (a replica that did not confirm can still be
     * promoted, and a grant is lost if every confirming replica fails with the master). The count is
     * on {@link io.locksmith.Lease#replicasAcknowledged()}.
     *
     * <p>Because WAIT blocks the connection it is sent on, each fresh acquisition runs its script and its
     * WAIT on a connection of its own, borrowed from a small pool (at most 8 per client, opened when first
     * needed; on a Cluster each is a cluster connection); renewals, releases, re-entries and everything
     * else stay on the shared connection and never wait behind a WAIT. When all 8 are busy (replicas
     * lagging under many concurrent acquisitions) an acquisition waits up to the command timeout for one,
     * then fails with {@link io.locksmith.BackendUnavailableException}. So an acquisition attempt can take
     * up to about three command timeouts (a connection, the script, the WAIT), plus one for giving the
     * grant back under {@link ReplicaAckPolicy#REQUIRE}.
     *
     * @param replicas how many replicas must confirm, at least 1
     * @param timeout longest wait, shorter than the command timeout
     * @param policy {@link ReplicaAckPolicy#REQUIRE} to fail the acquisition (releasing the grant) when
     *     fewer confirm in time, {@link ReplicaAckPolicy#REPORT} to keep it and report the count
     * @return this builder
     */
    public Builder replicaAcknowledgement(int replicas, Duration timeout, ReplicaAckPolicy policy) {
      this.replicaAcks = replicas;
      this.replicaAckTimeout = timeout;
      this.replicaAckPolicy = policy;
      return this;
    }

    /**
     * @param options namespace, default lease policy, clock, client name ({@link
     *     ClientOptions.Builder#clientName(String)}: part of every owner id and of every connection's
     *     name, {@code CLIENT SETNAME locksmith:<clientId>@<clientName>})
     * @return this builder
     */
    public Builder options(ClientOptions options) {
      this.options = options;
      return this;
    }

    /**
     * TLS settings: trusted CAs, a client certificate for mutual TLS, host name verification (on by
     * default). Needs a {@code rediss://}, {@code rediss-sentinel://} or {@code rediss-cluster://} URI,
     * without a {@code verifyPeer} option (the settings decide). Without them a {@code rediss} URI trusts
     * the JVM's trust store and verifies host names unless the URI says {@code verifyPeer=CA} or {@code
     * NONE}.
     *
     * @param tls the settings, or null for none
     * @return this builder
     */
    public Builder tls(RedisTls tls) {
      this.tls = tls;
      return this;
    }

    /**
     * Runs the client on the application's Lettuce {@link ClientResources} (its event loops, timers
     * and reconnect delay) instead of starting its own threads. The client opens its own two connections
     * with its own timeouts on them, and {@link RedisLockClient#close()} closes those and leaves the
     * resources running: shut them down yourself, after the lock client.
     *
     * <p>The reconnect delay is then the application's: Lettuce's default backs off up to 30 s, while
     * the client's own resources stop at 1 s, so after an outage locks may come back later than
     * the application's other commands need. Everything the client runs on these threads is
     * non-blocking.
     *
     * @param resources the resources to share, or {@code null} for the client's own (the default)
     * @return this builder
     */
    public Builder clientResources(ClientResources resources) {
      this.clientResources = resources;
      return this;
    }

    /**
     * Runs the client on the resources of the application's Lettuce client ({@link
     * AbstractRedisClient#getResources()}: a {@code RedisClient} or {@code RedisClusterClient}), as
     * {@link #clientResources(ClientResources)} does. The application's client itself is left alone: its
     * options (timeouts, behaviour while disconnected) and connections are not used or changed, because
     * the lock client depends on its own (every command bounded by {@link #commandTimeout(Duration)},
     * none queued while disconnected). So {@link #uri(String)} is still required, and {@link
     * RedisLockClient#close()} shuts down neither that client nor its resources.
     *
     * @param client the application's client, or {@code null} for the lock client's own resources
     * @return this builder
     */
    public Builder redisClient(AbstractRedisClient client) {
      this.redisClient = client;
      return this;
    }

    /** @return the resources to share, or null to create the client's own */
    private ClientResources sharedResources() {
      return clientResources != null ? clientResources : redisClient != null ? redisClient.getResources() : null;
    }

    /**
     * Validates the settings and connects.
     *
     * @return a connected client
     * @throws NullPointerException if the URI or a setting is null
     * @throws IllegalArgumentException if the URI is not a Redis, Redis Sentinel or Redis Cluster URI (a
     *     Sentinel URI without {@code sentinelMasterId}, a Cluster URI with a database, options or an
     *     empty host included; a missing host, a port that is not a number in 1..65535, an unencoded
     *     {@code @ / ? #} in the user or password), TLS settings come with a plain-text URI, a duration
     *     is out of its documented range, or both {@link #clientResources} and a {@link #redisClient} on
     *     other resources were given. Messages never show the password.
     * @throws io.locksmith.BackendConfigurationException if the configuration does not fit the server: a
     *     TLS certificate that is not trusted or does not name the host, a port that does not serve TLS,
     *     a host name that does not resolve, rejected credentials, missing ACL permissions, a database the
     *     server does not have. Retrying will not help.
     * @throws io.locksmith.BackendUnavailableException if the server cannot be reached (refused, or no
     *     answer within the command timeout); with Sentinel also if no sentinel answers or none knows the
     *     master name; on a Cluster if no seed node answers
     * @throws io.locksmith.LockException if the server refuses the connection for another reason
     * @throws IllegalStateException if the Lettuce on the class path is older than this module supports
     *     (the message names the version found, the range supported and how to select another)
     */
    public RedisLockClient build() {
      LettuceVersion.requireSupported();
      Objects.requireNonNull(uri, "uri");
      Objects.requireNonNull(commandTimeout, "commandTimeout");
      Objects.requireNonNull(waiterRecheck, "waiterRecheck");
      Objects.requireNonNull(fenceRetention, "fenceRetention");
      Objects.requireNonNull(fairQueueTimeout, "fairQueueTimeout");
      Objects.requireNonNull(options, "options");
      if (clientResources != null && redisClient != null && clientResources != redisClient.getResources()) {
        throw new IllegalArgumentException("give either clientResources or redisClient, not both: the lock "
            + "client runs on one set of Lettuce resources");
      }
      if (isClusterUri(uri)) {
        clusterSeeds = parseClusterUri(uri, tls);
        redisUri = null;
      } else {
        redisUri = parseUri(uri, true, tls);
        clusterSeeds = null;
      }
      within("commandTimeout", commandTimeout, Duration.ofMillis(1), MAX_COMMAND_TIMEOUT);
      within("waiterRecheck", waiterRecheck, Duration.ofMillis(10), MAX_WAITER_RECHECK);
      within("fenceRetention", fenceRetention, Duration.ofSeconds(1), MAX_FENCE_RETENTION);
      within("fairQueueTimeout", fairQueueTimeout, Duration.ofMillis(100), MAX_WAITER_RECHECK);
      if (replicaAckPolicy != null || replicaAckTimeout != null || replicaAcks != 0) {
        Objects.requireNonNull(replicaAckTimeout, "replica acknowledgement timeout");
        Objects.requireNonNull(replicaAckPolicy, "replica acknowledgement policy");
        if (replicaAcks < 1) {
          throw new IllegalArgumentException("replica acknowledgement needs at least 1 replica, was "
              + replicaAcks);
        }
        atLeast("replica acknowledgement timeout", replicaAckTimeout, Duration.ofMillis(1));
        if (replicaAckTimeout.compareTo(commandTimeout) >= 0) {
          throw new IllegalArgumentException("replica acknowledgement timeout " + replicaAckTimeout
              + " must be shorter than the command timeout " + commandTimeout);
        }
      }
      if (clusterSeeds != null) {
        clusterSeeds.forEach(seed -> seed.setTimeout(commandTimeout));
      } else {
        redisUri.setTimeout(commandTimeout);
      }
      RedisLockClient client = new RedisLockClient(this, backend(this));
      log.info(startMessage("Redis", client.clientId(), client.description, options, tls));
      return client;
    }
  }

  /** @throws IllegalArgumentException if {@code uri} is not a redis:// or rediss:// URI */
  static RedisURI parseUri(String uri) {
    return parseUri(uri, false);
  }

  /**
   * @param sentinel whether {@code redis-sentinel://} and {@code rediss-sentinel://} are accepted too
   * @throws IllegalArgumentException if {@code uri} has another scheme or Lettuce cannot parse it
   */
  static RedisURI parseUri(String uri, boolean sentinel) {
    return parseUri(uri, sentinel, null);
  }

  /**
   * @param tls explicit TLS settings whose host name rule replaces Lettuce's default, or null
   * @throws IllegalArgumentException as {@link #parseUri(String, boolean)}, and if {@code tls} is given
   *     for a plain-text URI or together with a {@code verifyPeer} query option
   */
  static RedisURI parseUri(String uri, boolean sentinel, RedisTls tls) {
    boolean direct = uri.startsWith("redis://") || uri.startsWith("rediss://");
    boolean viaSentinel = uri.startsWith("redis-sentinel://") || uri.startsWith("rediss-sentinel://");
    if (!direct && !(sentinel && viaSentinel)) {
      throw new IllegalArgumentException("uri must start with redis:// or rediss://"
          + (sentinel ? " (or redis-sentinel://, rediss-sentinel://, redis-cluster://, rediss-cluster://)" : "")
          + ", was '" + RedisUris.redact(uri) + "'");
    }
    RedisUris.Parts parts = RedisUris.split(uri, viaSentinel);
    checkTls(parts, tls);
    // Lettuce rejects a Sentinel URI without sentinelMasterId
    RedisURI parsed = RedisUris.lettuce(uri, parts);
    if (tls != null) {
      parsed.setVerifyPeer(tls.verifyMode());
      parsed.getSentinels().forEach(s -> s.setVerifyPeer(tls.verifyMode()));
    }
    return parsed;
  }

  /** Explicit TLS settings need a TLS scheme and are the only source of the verification rule. */
  private static void checkTls(RedisUris.Parts parts, RedisTls tls) {
    if (tls == null) {
      return;
    }
    if (!parts.scheme().startsWith("rediss")) {
      throw new IllegalArgumentException("TLS settings were given, but '" + parts.redacted() + "' is a plain-text"
          + " URI; use rediss://, rediss-sentinel:// or rediss-cluster://");
    }
    if (parts.hasQueryParameter(RedisURI.PARAMETER_NAME_VERIFY_PEER)) {
      throw new IllegalArgumentException("'" + parts.redacted() + "' sets verifyPeer, and so do the TLS settings"
          + " (RedisTls.Builder#verifyHostname); remove it from the URI");
    }
  }

  private static final String CLUSTER = "redis-cluster://";
  private static final String CLUSTER_TLS = "rediss-cluster://";

  static boolean isClusterUri(String uri) {
    return uri.startsWith(CLUSTER) || uri.startsWith(CLUSTER_TLS);
  }

  /**
   * {@code redis[s]-cluster://[[user:]password@]host[:port][,host[:port]…]} into one plain URI per seed
   * node, each with the credentials and TLS setting.
   *
   * @throws IllegalArgumentException if it is not such a URI, names no host, or has a path or query
   */
  static List<RedisURI> parseClusterUri(String uri) {
    return parseClusterUri(uri, null);
  }

  /** @param tls explicit TLS settings, or null; see {@link #parseUri(String, boolean, RedisTls)} */
  static List<RedisURI> parseClusterUri(String uri, RedisTls tls) {
    boolean ssl = uri.startsWith(CLUSTER_TLS);
    RedisUris.Parts parts = RedisUris.split(uri, true);
    if (!parts.path().isEmpty() || parts.query() != null) {
      throw new IllegalArgumentException("a Redis Cluster URI lists seed nodes only, without a database or"
          + " options: '" + parts.redacted() + "'");
    }
    checkTls(parts, tls);
    String credentials = parts.credentials() != null ? parts.credentials() + "@" : "";
    List<RedisURI> seeds = new ArrayList<>();
    for (String hostPort : parts.hosts()) {
      RedisURI seed = RedisUris.lettuce((ssl ? "rediss://" : "redis://") + credentials + hostPort, parts);
      if (tls != null) {
        seed.setVerifyPeer(tls.verifyMode());
      }
      seeds.add(seed);
    }
    return seeds;
  }

  /** @throws IllegalArgumentException if {@code d} is shorter than {@code min} */
  static void atLeast(String what, Duration d, Duration min) {
    if (d.compareTo(min) < 0) {
      throw new IllegalArgumentException(what + " must be at least " + min + ", was " + d);
    }
  }

  /**
   * Bounds a setting at build(), so that no duration reaches a conversion to milliseconds or
   * nanoseconds (or a Redis expiry) that it would overflow.
   *
   * @throws IllegalArgumentException if {@code d} is shorter than {@code min} or longer than {@code max}
   */
  static void within(String what, Duration d, Duration min, Duration max) {
    atLeast(what, d, min);
    if (d.compareTo(max) > 0) {
      throw new IllegalArgumentException(what + " must be at most " + max + ", was " + d);
    }
  }
}
