package io.locksmith.redis;

import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.SslOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import io.locksmith.BackendUnavailableException;
import io.locksmith.Capabilities;
import io.locksmith.FencingGuarantee;
import io.locksmith.LockInfo;
import io.locksmith.LockKind;
import io.locksmith.spi.AcquireMode;
import io.locksmith.spi.AcquireReply;
import io.locksmith.spi.BackendContext;
import io.locksmith.spi.HandOffOps;
import io.locksmith.spi.HandOffReply;
import io.locksmith.spi.LockBackend;
import io.locksmith.spi.LockOps;
import io.locksmith.spi.Primitive;
import io.locksmith.spi.RenewRequest;
import io.locksmith.spi.SemaphoreOps;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Redis (one master) through Lettuce. One multiplexed command connection carries every operation
 * (Lettuce pipelines concurrent callers on it); one pub/sub connection listens on this client's single
 * wake-up channel. The one exception: with replica acknowledgement on, fresh acquisitions run on
 * connections of their own ({@link ReplicaAckLanes}), because their {@code WAIT} blocks its connection.
 * Every operation is one {@code EVALSHA} of a preloaded script, falling back to {@code EVAL} (which
 * reloads it) if the server lost its script cache.
 *
 * <p>With a Sentinel URI, Lettuce resolves the master address through the sentinels on every connect
 * and on every reconnect of either connection ({@code RedisClient#getSocketAddress} is deferred and
 * re-run by the reconnection handler), and the pub/sub connection re-subscribes when it comes back. So
 * both connections follow a failover once their connection to the old master drops: a crash drops it,
 * and so does Sentinel when it demotes a running master (it closes the clients' connections). A master
 * that hangs (paused process, frozen VM, one-way partition) drops nothing, so Lettuce would stay with
 * it; for that case a command timeout or a {@code READONLY} reply makes this backend ask the sentinels
 * and, if they name another node, replace both connections ({@link #checkMaster}).
 *
 * <p>On a Redis Cluster ({@link RedisClusterConnections}) Lettuce routes every script by the slot of its
 * first key (all keys of one lock share a hash tag, so one slot), follows {@code MOVED}/{@code ASK} and
 * refreshes the slot map. This class adds two things: renewals are batched per slot (a script's keys must
 * share one), and a {@code TRYAGAIN} reply (a multi-key script on a slot that is being migrated) is
 * retried with a short backoff within the command timeout instead of failing at once.
 */
final class RedisBackend implements LockBackend, HandOffOps {
  private static final Logger log = LoggerFactory.getLogger(RedisBackend.class);
  private static final Capabilities CAPABILITIES = new Capabilities("redis",
      EnumSet.of(LockKind.EXCLUSIVE, LockKind.FAIR, LockKind.SEMAPHORE,
          LockKind.READ_WRITE), FencingGuarantee.CLOCK_FLOORED, true);
  /** Wake-up message tag of the exclusive lock's waiters; see {@link #onWakeMessage}. */
  static final char EXCLUSIVE_TAG = 'x';
  /** Longest pause between two reconnection attempts of a dropped connection. */
  static final Duration MAX_RECONNECT_DELAY = Duration.ofSeconds(1);
  /** Least time between two attempts to connect a node that could not be reached (Redlock). */
  private static final long RECONNECT_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

  /** How the acquire script mints a token; see acquire.lua. */
  enum TokenRule {
    /** {@code max(last + 1, server µs)}: one node decides alone. */
    TIME_FLOORED("t"),
    /** {@code last + 1}, seeded by server µs: Redlock nodes stay in step. */
    COUNTER("c");

    final String arg;

    TokenRule(String arg) {
      this.arg = arg;
    }
  }

  private final RedisURI uri;
  /** Redis Cluster: the seed nodes; null for one master (direct or through Sentinel). */
  private final List<RedisURI> clusterSeeds;
  private RedisClusterConnections cluster;
  private final Duration commandTimeout;
  private final long waiterRecheckMillis;
  private final long fenceRetentionMillis;
  /** The two settings above as script arguments, formatted once rather than on every acquire. */
  private final String fenceRetentionArg;
  /** The acquire script with this client's waiter backstop, fence retention and token rule in its text. */
  final RedisScript acquireScript;
  /** The latest lease time formatted as a script argument (nearly always the same one); see {@link #leaseArg}. */
  private volatile LeaseArg lastLeaseArg = new LeaseArg(-1, "-1");
  private final TokenRule tokenRule;
  /** The fair lock's operations over this backend's connections. */
  final RedisFairLock fair;
  /** Replicas that must confirm a grant (0: do not ask), how long to wait, and whether it is required. */
  private int replicaAcks;
  private long replicaAckTimeoutMillis;
  private boolean replicaAcksRequired;
  /** TLS settings for a {@code rediss} URI (trust, client certificate), or null for plain text. */
  private RedisTls tls;
  /** Connections reserved for acknowledged grants; null unless replica acknowledgement is on. */
  private volatile ReplicaAckLanes lanes;
  /** Grants under replica acknowledgement: on a lane, confirmed by {@code WAIT}. */
  private final ReplicaAckGrants replicaAckGrants = new ReplicaAckGrants(this);
  /**
   * Shared resources owned by someone else (Redlock, or the application's), or null to create and own
   * them; never shut down here.
   */
  private ClientResources sharedResources;
  private ClientResources resources;
  private RedisClient client;
  private BackendContext context;
  private RedisKeys keys;
  private String channelPrefix;
  // set once connected; null while a lenient node has never been reached
  private volatile StatefulRedisConnection<String, String> connection;
  private volatile StatefulRedisPubSubConnection<String, String> pubsub;
  private volatile RedisClusterAsyncCommands<String, String> commands;
  private volatile boolean closed;
  private final AtomicBoolean connecting = new AtomicBoolean();
  private volatile long lastAttempt;
  /** Sentinel: the node each open connection of this client is connected to, as Lettuce reports it. */
  private final Map<RedisChannelHandler<?, ?>, SocketAddress> connectedTo = new ConcurrentHashMap<>();
  /** Sentinel: whether the sentinels still name the node this client talks to. */
  private final SentinelMasterCheck masterCheck = new SentinelMasterCheck(this);
  /** Semaphore operations per declared permit count: one object per count, so renewals batch. */
  /** Script calls: by digest, reloaded when the server lost them, retried on a migrating Cluster slot. */
  private final ScriptDispatch dispatch;
  /** This client's registered waiters and the routing of its wake-up channel's messages. */
  private final WakeupRouter wakeups = new WakeupRouter(this);
  private final Map<Integer, RedisSemaphore> semaphores = new ConcurrentHashMap<>();
  /** The eviction policy each node reported when connected (node address to policy); see {@link #connect}. */
  private final Map<String, String> evictionPolicies = new ConcurrentHashMap<>();
  /** Both sides of the read-write lock, over this backend's connections. */
  private final RedisReadWriteOps readWrite = new RedisReadWriteOps(this);
  /**
   * One master (direct or through Sentinel): whether the command connection is up, and whether the
   * wake-up channel is subscribed; see {@link #connectionStates}.
   */
  private volatile boolean commandUp = true;
  private volatile boolean channelUp = true;
  /** {@link io.locksmith.spi.BackendEvents#connectionLost} was reported, and no restoration since. */
  private final AtomicBoolean reportedLost = new AtomicBoolean();
  /** Cluster: the wake-up channel was subscribed once (a later subscription is a re-subscription). */
  private volatile boolean subscribedOnce;

  RedisBackend(RedisURI uri, Duration commandTimeout, Duration waiterRecheck, Duration fenceRetention) {
    this(uri, commandTimeout, waiterRecheck, fenceRetention, TokenRule.TIME_FLOORED, null);
  }

  /** A backend on a Redis Cluster, found through {@code seeds} (any one that answers is enough). */
  RedisBackend(List<RedisURI> seeds, Duration commandTimeout, Duration waiterRecheck, Duration fenceRetention) {
    this(seeds.get(0), List.copyOf(seeds), commandTimeout, waiterRecheck, fenceRetention, TokenRule.TIME_FLOORED,
        null);
  }

  RedisBackend(RedisURI uri, Duration commandTimeout, Duration waiterRecheck, Duration fenceRetention,
      TokenRule tokenRule, ClientResources sharedResources) {
    this(uri, null, commandTimeout, waiterRecheck, fenceRetention, tokenRule, sharedResources);
  }

  private RedisBackend(RedisURI uri, List<RedisURI> clusterSeeds, Duration commandTimeout,
      Duration waiterRecheck, Duration fenceRetention, TokenRule tokenRule, ClientResources sharedResources) {
    this.uri = uri;
    this.clusterSeeds = clusterSeeds;
    this.commandTimeout = commandTimeout;
    this.dispatch = new ScriptDispatch(this, commandTimeout);
    this.waiterRecheckMillis = waiterRecheck.toMillis();
    this.fenceRetentionMillis = fenceRetention.toMillis();
    this.fenceRetentionArg = Long.toString(fenceRetentionMillis);
    this.tokenRule = tokenRule;
    this.acquireScript = RedisScript.acquire(waiterRecheckMillis, fenceRetentionMillis,
        tokenRule == TokenRule.TIME_FLOORED);
    this.sharedResources = sharedResources;
    this.fair = new RedisFairLock(this, waiterRecheck, fenceRetention);
  }

  /**
   * Runs on {@code resources}, which someone else owns (the application's Lettuce event loops and
   * timers): {@link #close()} leaves them running. Call before {@link #open}.
   */
  void shareResources(ClientResources resources) {
    this.sharedResources = Objects.requireNonNull(resources, "resources");
  }

  /** Connects, loads the scripts and subscribes, or fails: one node is all there is. */
  @Override
  public void open(BackendContext context) {
    // connect, load scripts, subscribe: three steps each bounded by the command timeout;
    // through Sentinel each of the two connects is two steps (ask a sentinel, then connect to the master);
    // on a Cluster: slot map, connect, scripts, pub/sub slot map and connect, subscribe
    int steps = clusterSeeds != null ? 6 : RedisLockClient.isSentinel(uri) ? 5 : 3;
    try {
      openAsync(context).get(commandTimeout.toMillis() * steps + 1000, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      close();
      Thread.currentThread().interrupt();
      throw new BackendUnavailableException("interrupted while connecting to "
          + description(), e);
    } catch (TimeoutException e) {
      close();
      throw new BackendUnavailableException("Redis unavailable, could not connect to " + description()
          + ": no answer within " + (commandTimeout.toMillis() * steps + 1000) + " ms", e);
    } catch (ExecutionException | RuntimeException e) {
      close();
      throw RedisExceptions.translate(e, "connect to " + description());
    }
  }

  /**
   * Uses TLS with these settings; call before {@link #open}. Ignored for a plain-text URI: the URI's
   * scheme decides whether TLS is used, these settings how.
   */
  void tls(RedisTls tls) {
    this.tls = (clusterSeeds != null ? clusterSeeds.get(0) : uri).isSsl() ? tls : null;
  }

  /**
   * The connection name every connection of this client gives itself ({@code CLIENT SETNAME}): {@code
   * locksmith:<clientId>}, or {@code locksmith:<clientId>@<clientName>}. Owner ids start with the same
   * client id, so {@code CLIENT LIST} leads from a lock's owner to the connection's address, and the name
   * to the process.
   */
  static String connectionName(BackendContext context) {
    return "locksmith:" + context.clientId() + (context.clientName() != null ? "@" + context.clientName() : "");
  }

  /**
   * Starts connecting without waiting. A node that cannot be reached now is tried again, at most once a
   * second, whenever an operation needs it; until then its operations fail at once (Redlock counts them
   * as failed nodes).
   *
   * @return completes when connected, or exceptionally with the first attempt's failure
   */
  CompletableFuture<Void> openAsync(BackendContext context) {
    this.context = context;
    keys = new RedisKeys(context.namespace());
    channelPrefix = keys.channelPrefix();
    // Reconnect backoff doubles from 1 ms but stops at 1 s (Lettuce's default goes up to 30 s): an
    // outage such as a Sentinel failover ends at a moment the client cannot know, and every second of
    // backoff after it is time in which acquisitions fail and leases cannot renew.
    resources = sharedResources != null ? sharedResources
        : DefaultClientResources.builder().ioThreadPoolSize(2).computationThreadPoolSize(2)
            .reconnectDelay(Delay.exponential(Duration.ZERO, MAX_RECONNECT_DELAY, 2, TimeUnit.MILLISECONDS))
            .build();
    String name = connectionName(context);
    SslOptions ssl = tls != null ? tls.toSslOptions(commandTimeout) : null;
    if (clusterSeeds != null) {
      // Lettuce connects to every node, for commands, pub/sub and topology, with the first seed's settings
      clusterSeeds.forEach(seed -> seed.setClientName(name));
      cluster = new RedisClusterConnections(clusterSeeds, commandTimeout, resources, ssl, scripts());
      if (replicaAcks > 0) {
        lanes = new ReplicaAckLanes(cluster::openLane, resources, commandTimeout, description());
      }
      connecting.set(true);
      return TlsTimeoutDiagnosis.diagnose(tls != null, connect(), checkedAddresses(), commandTimeout, description());
    }
    // the master's connections take the name from this URI, the sentinels' from their own
    uri.setClientName(name);
    uri.getSentinels().forEach(sentinel -> sentinel.setClientName(name));
    client = RedisClient.create(resources, uri);
    io.lettuce.core.ClientOptions.Builder options = io.lettuce.core.ClientOptions.builder()
        .timeoutOptions(TimeoutOptions.enabled(commandTimeout))
        .socketOptions(SocketOptions.builder().connectTimeout(commandTimeout).keepAlive(true).build())
        // fail fast while disconnected instead of queueing: nothing waits on a dead server
        .disconnectedBehavior(io.lettuce.core.ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
        .autoReconnect(true);
    if (ssl != null) {
      options.sslOptions(ssl);
    }
    client.setOptions(options.build());
    if (RedisLockClient.isSentinel(uri)) {
      client.addListener(new RedisConnectionStateListener() {
        @Override
        public void onRedisConnected(RedisChannelHandler<?, ?> c, SocketAddress address) {
          connectedTo.put(c, address);
        }

        @Override
        public void onRedisDisconnected(RedisChannelHandler<?, ?> c) {
          connectedTo.remove(c);
        }
      });
    }
    if (replicaAcks > 0) {
      lanes = new ReplicaAckLanes(replicaAckGrants::openLane, resources, commandTimeout, description());
    }
    connecting.set(true);
    return TlsTimeoutDiagnosis.diagnose(tls != null, connect(), checkedAddresses(), commandTimeout, description());
  }

  /** The addresses a timed-out TLS connect is probed at: the Cluster seeds, the sentinels, or the node. */
  private List<RedisURI> checkedAddresses() {
    return clusterSeeds != null ? clusterSeeds : RedisLockClient.isSentinel(uri) ? uri.getSentinels() : List.of(uri);
  }

  /** One attempt: command connection, scripts, pub/sub subscription; publishes them only if all work. */
  CompletableFuture<Void> connect() {
    lastAttempt = System.nanoTime();
    String channel = channelPrefix + context.clientId();
    if (cluster != null) {
      return cluster.connect(channel, wakeListener()).thenAccept(c -> {
        commands = c;
        if (closed) {
          // this runs on a Lettuce I/O thread: close() waits for channels that need this very thread to
          // close, so it runs elsewhere (it deadlocked a client closed while its connect completed)
          ForkJoinPool.commonPool().execute(cluster::close);
        }
      }).whenComplete((v, f) -> connecting.set(false));
    }
    List<StatefulConnection<String, String>> opened = new ArrayList<>();
    CompletableFuture<StatefulRedisConnection<String, String>> first =
        LostHandshake.connect(() -> client.connectAsync(Utf8Codec.INSTANCE, uri));
    CompletableFuture<Void> done = first
        .thenCompose(conn -> {
          opened.add(conn);
          conn.setTimeout(commandTimeout);
          conn.addListener(connectionStates);
          List<CompletableFuture<String>> loads = new ArrayList<>();
          for (RedisScript script : scripts()) {
            loads.add(conn.async().scriptLoad(script.text).toCompletableFuture().thenApply(sha -> {
              if (!script.sha.equals(sha)) {
                throw new IllegalStateException("server digest " + sha + " differs for " + script);
              }
              return sha;
            }));
          }
          // pipelined with the script loads, so it costs no round trip; never fails the connect
          SocketAddress at = connectedTo.get(conn);
          String node = at != null ? SentinelMasterCheck.hostPort(at) : RedisLockClient.describe(uri);
          loads.add(EvictionPolicyCheck.check(conn.async(), node).thenApply(policy -> {
            if (policy != null) {
              evictionPolicies.put(node, policy);
            }
            return policy;
          }));
          return CompletableFuture.allOf(loads.toArray(new CompletableFuture<?>[0]))
              .thenCompose(v -> LostHandshake.connect(() -> client.connectPubSubAsync(Utf8Codec.INSTANCE, uri)))
              .thenCompose(ps -> {
                opened.add(ps);
                ps.setTimeout(commandTimeout);
                ps.addListener(wakeListener());
                ps.addListener(connectionStates);
                return ps.async().subscribe(channel).toCompletableFuture().thenAccept(v -> {
                  StatefulRedisPubSubConnection<String, String> replacedPubsub = pubsub;
                  StatefulRedisConnection<String, String> replaced = connection;
                  pubsub = ps;
                  connection = conn;
                  commands = conn.async();
                  commandUp = true;
                  channelUp = true;
                  // a pair this one replaces (Sentinel: still on the old master) goes; what is
                  // pending on it fails now instead of at its timeout
                  if (replaced != null) {
                    replaced.closeAsync();
                    replacedPubsub.closeAsync();
                    // and acknowledged grants must not go on to the old node either
                    ReplicaAckLanes l = lanes;
                    if (l != null) {
                      l.retireAll();
                    }
                  }
                  // leases may have been lost while this node was unreachable, or the new pair leads to
                  // another master: every lease is verified now. Not at the first connect: no lease can
                  // predate it, and the event, handled later on the client's timer, would verify the
                  // leases granted meanwhile for nothing (a test saw that verification in flight)
                  boolean wasLost = reportedLost.getAndSet(false);
                  if (replaced != null || wasLost) {
                    context.events().connectionRestored();
                  }
                });
              });
        });
    return done.whenComplete((v, failure) -> {
      connecting.set(false);
      if (failure != null || closed) {
        if (failure == null) {
          commands = null;
        }
        // closeAsync, never close(): this may run on a Lettuce I/O thread, and close() waits for a channel
        // close that needs that thread (a client closed while its SUBSCRIBE reply arrived hung forever)
        for (StatefulConnection<String, String> c : opened) {
          c.closeAsync().whenComplete((ignored, e) -> {
            if (e != null) {
              log.debug("closing a half-open connection: {}", e.toString());
            }
          });
        }
      }
    });
  }

  /** Routes the messages of a pub/sub connection to {@link #onWakeMessage}. */
  private RedisPubSubAdapter<String, String> wakeListener() {
    return new RedisPubSubAdapter<>() {
      @Override
      public void message(String channel, String message) {
        onWakeMessage(channel, message);
      }

      @Override
      public void smessage(String shardChannel, String message) {
        onWakeMessage(shardChannel, message);
      }

      @Override
      public void subscribed(String channel, long count) {
        onSubscribed();
      }
    };
  }

  /**
   * The wake-up channel is subscribed: at connect (nobody waits yet) or again after the pub/sub connection
   * dropped and came back, possibly on another node. A release published meanwhile went unheard, so every
   * registered waiter of this client re-checks now rather than at its backstop. So may a force-unlock
   * notice, and the server may have restarted empty: the client's leases are verified (see {@link
   * #connectionStates}; on a Cluster, at every re-subscription). Runs on a Lettuce I/O thread.
   */
  private void onSubscribed() {
    wakeups.recheckAll(context);
    if (cluster != null) {
      if (subscribedOnce && !closed) {
        context.events().connectionRestored();
      }
      subscribedOnce = true;
    } else {
      channelUp = true;
      restoredIfBothUp();
    }
  }

  /**
   * One master (direct or through Sentinel): tells the client's leases when this client's connection pair
   * drops and when it is back ({@link io.locksmith.spi.BackendEvents}). Lost: the moment either the command
   * connection or the pub/sub connection drops, since renewals no longer reach the server, or eviction
   * notices no longer reach this client. Restored: once the command connection is connected again (Lettuce
   * reports that after it re-ran the connection handshake, so it accepts commands) and the wake-up channel
   * is subscribed again; the client then verifies every lease, which is how a server that restarted empty
   * (or a replica promoted without the lock) is found out in one round trip. Events of connections this
   * backend no longer uses (a pair replaced after a failover) are ignored.
   *
   * <p>Redis Cluster is not covered: its command connection is one connection per node, and a node that
   * drops concerns only the leases in its slots, which learn it at their next renewal; a re-subscription of
   * the wake-up channel (its node went away) verifies every lease.
   */
  private final RedisConnectionStateListener connectionStates = new RedisConnectionStateListener() {
    @Override
    public void onRedisConnected(RedisChannelHandler<?, ?> c, SocketAddress address) {
      if (c == connection) {
        commandUp = true;
        restoredIfBothUp();
      }
    }

    @Override
    public void onRedisDisconnected(RedisChannelHandler<?, ?> c) {
      if (c == connection) {
        commandUp = false;
        lost("the command connection to " + description() + " dropped");
      } else if (c == pubsub) {
        channelUp = false;
        lost("the wake-up channel's connection to " + description() + " dropped");
      }
    }
  };

  /**
   * @return whether both connections of this node are up as far as this backend knows (Redlock counts its
   *     connected nodes with it)
   */
  boolean connectionUp() {
    return commands != null && commandUp && channelUp && !closed;
  }

  private void lost(String cause) {
    if (!closed && reportedLost.compareAndSet(false, true)) {
      context.events().connectionLost(cause);
    }
  }

  private void restoredIfBothUp() {
    if (commandUp && channelUp && !closed && reportedLost.compareAndSet(true, false)) {
      context.events().connectionRestored();
    }
  }

  /** The command interface, or a reason to fail fast (and a reconnect attempt) if never connected. */
  RedisClusterAsyncCommands<String, String> commands(String what) {
    RedisClusterAsyncCommands<String, String> c = commands;
    if (c != null) {
      return c;
    }
    if (!closed && System.nanoTime() - lastAttempt > RECONNECT_INTERVAL_NANOS
        && connecting.compareAndSet(false, true)) {
      connect().whenComplete((v, f) -> {
        if (f != null) {
          log.debug("still cannot connect to {}: {}", RedisLockClient.describe(uri), f.toString());
        } else {
          log.info("connected to {}", RedisLockClient.describe(uri));
        }
      });
    }
    throw new BackendUnavailableException("Redis " + description()
        + " is not connected, could not " + what);
  }

  /** @return the client's context, set by {@link #open} */
  BackendContext context() {
    return context;
  }

  /** @return the Lettuce resources in use, or null before {@link #open} */
  ClientResources resources() {
    return resources;
  }

  /** @return whether this backend talks to a Redis Cluster */
  boolean isCluster() {
    return cluster != null;
  }

  /** @return the URI this backend connects with */
  RedisURI uriForChecks() {
    return uri;
  }

  /** @return the Lettuce client of a single master or Sentinel deployment, or null */
  RedisClient redisClient() {
    return client;
  }

  /** @return the shared command connection, or null */
  Object commandConnection() {
    return connection;
  }

  /** @return the pub/sub connection of the wake-up channel, or null */
  Object pubsubConnection() {
    return pubsub;
  }

  /** @return the node {@code c} is connected to as Lettuce reported it, or null */
  SocketAddress connectedTo(Object c) {
    return c == null ? null : connectedTo.get(c);
  }

  /** @return the flag that is set while a (re)connect of the pair runs */
  AtomicBoolean connecting() {
    return connecting;
  }

  /** @return whether {@link #close} was called */
  boolean isClosed() {
    return closed;
  }

  @Override
  public Capabilities capabilities() {
    return CAPABILITIES;
  }

  /** @return the operations of the lock kind a wake-up tag names, or null for an unknown tag */
  LockOps opsForTag(char tag) {
    switch (tag) {
      case EXCLUSIVE_TAG:
        return this;
      case RedisFairLock.TAG:
        return fair;
      case RedisSemaphore.TAG:
        return semaphoreOps(1); // passing a wake-up reads the stored count, not the declared one
      case RedisReadWriteOps.READ_TAG:
        return readWrite.read();
      case RedisReadWriteOps.WRITE_TAG:
        return readWrite.write();
      default:
        return null;
    }
  }

  @Override
  public LockOps ops(Primitive primitive) {
    switch (primitive) {
      case EXCLUSIVE:
        return this;
      case FAIR:
        return fair;
      case READ:
        return readWrite.read();
      case WRITE:
        return readWrite.write();
      default:
        throw new UnsupportedOperationException("Redis does not offer " + primitive + " locks yet");
    }
  }

  @Override
  public SemaphoreOps semaphoreOps(int declaredPermits) {
    return semaphores.computeIfAbsent(declaredPermits,
        n -> new RedisSemaphore(this, n, waiterRecheckMillis, fenceRetentionMillis));
  }

  /** The pub/sub channel prefix; a client listens on {@code prefix + clientId}. */
  String channelPrefix() {
    return channelPrefix;
  }

  /** @return the longest backstop before a registered waiter re-checks, in ms */
  long waiterRecheckMillis() {
    return waiterRecheckMillis;
  }

  /** @return how long a lock's last fencing token is kept after its grant, in ms */
  long fenceRetentionMillis() {
    return fenceRetentionMillis;
  }

  /** Where this backend's keys live. */
  RedisKeys keys() {
    return keys;
  }

  /**
   * Runs a script by digest; reloads it with EVAL once if the server's script cache lost it. On a Cluster,
   * a {@code TRYAGAIN} reply (the keys' slot is being migrated and not all of them have moved, so the
   * script was not run) is retried after 5, 10, 20, ... 100 ms for as long as the command timeout allows.
   */
  <T> CompletionStage<T> run(RedisScript script, ScriptOutputType type, String what,
      String[] scriptKeys, String... args) {
    return run(null, script, type, what, scriptKeys, args);
  }

  /**
   * As {@link #run(RedisScript, ScriptOutputType, String, String[], String...)}, on the given connection.
   *
   * @param on the connection's commands, or null for the shared command connection
   */
  <T> CompletableFuture<T> run(RedisClusterAsyncCommands<String, String> on, RedisScript script,
      ScriptOutputType type, String what, String[] scriptKeys, String... args) {
    return run(on, script, what, (c, eval) -> eval ? c.eval(script.text, type, scriptKeys, args)
        : c.evalsha(script.sha, type, scriptKeys, args));
  }

  /**
   * Sends one script call, as {@link #run(RedisClusterAsyncCommands, RedisScript, ScriptOutputType, String,
   * String[], String...)} does, built by {@code call} (which may read the reply with an output of its own);
   * see {@link ScriptDispatch#run}.
   */
  <T> CompletableFuture<T> run(RedisClusterAsyncCommands<String, String> on, RedisScript script, String what,
      ScriptDispatch.ScriptCall<T> call) {
    return dispatch.run(on, script, what, call);
  }

  /** Sentinel only: see {@link SentinelMasterCheck#afterFailure}. */
  void checkMasterAfter(Throwable failure) {
    masterCheck.afterFailure(failure);
  }

  @Override
  public CompletionStage<AcquireReply> acquire(String name, String owner, long leaseMillis,
      AcquireMode mode, String waiterId) {
    return runAcquire(this, acquireScript, acquireCall(name, owner, leaseMillis, mode, waiterId), name, owner,
        mode, waiterId);
  }

  /** A wake-up message on this client's channel; see {@link WakeupRouter#onMessage}. */
  void onWakeMessage(String channel, String message) {
    wakeups.onMessage(channel, message);
  }

  /** See {@link WakeupRouter#track}. */
  CompletionStage<AcquireReply> trackWaiter(String name, String waiterId, CompletionStage<AcquireReply> reply) {
    return wakeups.track(name, waiterId, reply);
  }

  /** @return how many waiters of this client are registered on the server, as far as it knows */
  int registeredWaiterCount() {
    return wakeups.count();
  }

  /** A waiter of any lock kind gave up; see {@link WakeupRouter#track}. */
  void forgetWaiter(String waiterId) {
    wakeups.forget(waiterId);
  }

  /**
   * @return the {@code maxmemory-policy} of each node this client connected to that would say (address to
   *     policy); see {@link EvictionPolicyCheck}
   */
  Map<String, String> evictionPolicies() {
    return cluster != null ? cluster.evictionPolicies() : Map.copyOf(evictionPolicies);
  }


  /**
   * Runs the acquire script of any lock kind and, with replica acknowledgement configured, has a fresh grant
   * confirmed by the replicas (see {@link #replicaAcknowledgement}). Without it, or for a re-entry (the
   * grant was confirmed when it was made), the script goes on the shared command connection.
   *
   * <p>With it, the script and its {@code WAIT} go on a connection of their own, borrowed from
   * {@link ReplicaAckLanes} for this one acquisition: {@code WAIT} counts the replicas that have that
   * connection's writes, so it covers the grant, and while it blocks that connection nothing else of this
   * client is queued behind it. Renewals, releases, re-entries and every other command stay on the shared
   * connection. A refused attempt gives the lane back at once.
   *
   * @param ops the lock kind's operations, whose {@code release} gives a grant back
   * @param call the script's keys and arguments; its first key names the lock's slot on a Cluster
   * @return the reply; a waiter the refusal registered is tracked ({@link #trackWaiter})
   */
  CompletionStage<AcquireReply> runAcquire(LockOps ops, RedisScript script, AcquireCall call, String name,
      String owner, AcquireMode mode, String waiterId) {
    // the common reply is read straight off the wire (AcquireReplyOutput): no list, boxed numbers or token
    // string in between, on the event-loop thread every grant passes through
    return runAcquire(ops, call, name, owner, mode, waiterId, on -> run(on, script, call.what,
        (c, withText) -> c.dispatch(withText ? CommandType.EVAL : CommandType.EVALSHA, new AcquireReplyOutput(),
            scriptArgs(withText ? script.text : script.sha, call.keys, call.args))).thenApply(reply -> {
              if (reply == null) { // AcquireReplyOutput reports a malformed reply as an error; never left as null
                throw new IllegalStateException("no reply to " + call.what);
              }
              return reply;
            }));
  }

  /** The arguments of {@code EVAL}/{@code EVALSHA}, as Lettuce's own command builder lays them out. */
  private static CommandArgs<String, String> scriptArgs(String textOrDigest, String[] scriptKeys, String[] args) {
    return new CommandArgs<>(Utf8Codec.INSTANCE).add(textOrDigest).add(scriptKeys.length).addKeys(scriptKeys)
        .addValues(args);
  }

  /**
   * As {@link #runAcquire(LockOps, RedisScript, AcquireCall, String, String, AcquireMode, String)}, for a
   * script whose reply says more than the common {@code {1, token, holds}} / {@code {0, retry, …}} (the
   * semaphore's carries its counts).
   *
   * @param parse turns the script's reply into the SPI's
   */
  CompletionStage<AcquireReply> runAcquire(LockOps ops, RedisScript script, AcquireCall call, String name,
      String owner, AcquireMode mode, String waiterId, Function<List<Object>, AcquireReply> parse) {
    return runAcquire(ops, call, name, owner, mode, waiterId, on -> this.<List<Object>>run(on, script,
        ScriptOutputType.MULTI, call.what, call.keys, call.args).thenApply(parse));
  }

  /**
   * See {@link #runAcquire(LockOps, RedisScript, AcquireCall, String, String, AcquireMode, String)}.
   *
   * @param send sends the script on the given connection's commands (null: the shared connection)
   */
  private CompletionStage<AcquireReply> runAcquire(LockOps ops, AcquireCall call, String name, String owner,
      AcquireMode mode, String waiterId,
      Function<RedisClusterAsyncCommands<String, String>, CompletableFuture<AcquireReply>> send) {
    ReplicaAckLanes l = lanes;
    if (replicaAcks == 0 || mode == AcquireMode.REENTER || l == null) {
      return trackWaiter(name, waiterId, send.apply(null));
    }
    return replicaAckGrants.run(l, ops, call, name, owner, waiterId, send);
  }

  /**
   * Test hook: called with the lock name when a grant on a lane has arrived, before it is checked and
   * confirmed by the replicas; the grant goes on when the returned stage completes. Null (the default):
   * it goes on at once.
   */
  volatile Function<String, CompletionStage<?>> laneGrantHook;

  /** Asks the replicas to acknowledge a fresh grant ({@code WAIT}); see {@link #replicaAcknowledgement}. */
  void replicaAcknowledgement(int replicas, Duration timeout, boolean required) {
    this.replicaAcks = replicas;
    this.replicaAckTimeoutMillis = timeout.toMillis();
    this.replicaAcksRequired = required;
  }

  /** Replicas that must confirm a grant, how long {@code WAIT} may block, whether fewer fails it. */
  int replicaAcks() {
    return replicaAcks;
  }

  long replicaAckTimeoutMillis() {
    return replicaAckTimeoutMillis;
  }

  boolean replicaAcksRequired() {
    return replicaAcksRequired;
  }

  /** Whether the master is found through Sentinel (not a Cluster, not one fixed node). */
  boolean throughSentinel() {
    return clusterSeeds == null && RedisLockClient.isSentinel(uri);
  }

  /** Whether the shared command connection is up as far as this backend knows. */
  boolean commandUp() {
    return commandUp;
  }

  Duration commandTimeout() {
    return commandTimeout;
  }

  /** Sentinel: has the sentinels asked soon whether this client still talks to the master. */
  void checkMasterSoon() {
    masterCheck.soon();
  }

  ScriptDispatch dispatch() {
    return dispatch;
  }

  /** The scripts to load at connect: the shared ones and this client's acquire script. */
  RedisScript[] scripts() {
    RedisScript[] all = java.util.Arrays.copyOf(RedisScript.ALL, RedisScript.ALL.length + 1);
    all[RedisScript.ALL.length] = acquireScript;
    return all;
  }

  /** @return the node the shared command connection is connected to (Sentinel), or null (for tests) */
  SocketAddress commandNode() {
    StatefulRedisConnection<String, String> shared = connection;
    return shared == null ? null : connectedTo.get(shared);
  }

  /** @return connections open or opening for acknowledged grants (for tests) */
  int replicaAckConnections() {
    ReplicaAckLanes l = lanes;
    return l == null ? 0 : l.openLanes();
  }

  /**
   * The acquire script's reply as it comes: {@code {1, token, holds}}, {@code {0, retryMillis,
   * lastToken}} or {@code {-1}}.
   */
  CompletionStage<List<Object>> acquireRaw(String name, String owner, long leaseMillis,
      AcquireMode mode, String waiterId) {
    return acquireRaw(acquireCall(name, owner, leaseMillis, mode, waiterId));
  }

  /** Runs an acquire prepared by {@link #acquireCall}, on this node. */
  CompletionStage<List<Object>> acquireRaw(AcquireCall call) {
    return run(acquireScript, ScriptOutputType.MULTI, call.what, call.keys, call.args);
  }

  /**
   * The acquire script's keys and arguments, built once: Redlock sends the same call to every node (its
   * nodes share the namespace and settings).
   */
  AcquireCall acquireCall(String name, String owner, long leaseMillis, AcquireMode mode, String waiterId) {
    String lock = keys.lock(name);
    return new AcquireCall("acquire lock '" + name + "'",
        new String[] {lock}, // the waiters and fence keys beside it are derived in the script
        new String[] {owner, leaseArg(leaseMillis), acquireMode(mode, waiterId), waiterId == null ? "" : waiterId});
  }

  /**
   * acquire.lua's mode: {@code r} re-entry; {@code w} a new hold asked for by a waiter this client knows to be
   * registered on the server (its grant removes the registration and keeps the waiter mark); {@code n}
   * otherwise, which may take the fast path (mint, then {@code SET NX}) and leaves the waiters key alone.
   * A registration this client missed (its reply was lost) is harmless: it expires at its deadline, and a
   * wake-up for it is passed on ({@code pass-wakeup.lua}).
   */
  private String acquireMode(AcquireMode mode, String waiterId) {
    if (mode == AcquireMode.REENTER) {
      return "r";
    }
    return waiterId != null && wakeups.isRegistered(waiterId) ? "w" : "n";
  }

  /** See {@link #acquireCall}. */
  record AcquireCall(String what, String[] keys, String[] args) {}

  /** A lease time and its decimal text. */
  private record LeaseArg(long millis, String text) {}

  /**
   * {@code leaseMillis} as a script argument. A client's locks nearly always share one lease time, so the
   * text of the latest one is kept (racing callers at worst format it again).
   */
  String leaseArg(long leaseMillis) {
    LeaseArg last = lastLeaseArg;
    if (last.millis() != leaseMillis) {
      last = new LeaseArg(leaseMillis, Long.toString(leaseMillis));
      lastLeaseArg = last;
    }
    return last.text();
  }

  /**
   * Raises this node's token counter for {@code name} to at least {@code token} and, if {@code owner}
   * holds the lock here, records the token on its hold.
   *
   * @param owner the owner, or {@code ""} to raise the counter only
   */
  CompletionStage<Long> raiseFence(String name, String owner, long token) {
    String lock = keys.lock(name);
    return run(RedisScript.RAISE_FENCE, ScriptOutputType.INTEGER, "raise the token of '" + name + "'",
        new String[] {lock, RedisKeys.fence(lock)}, owner, Long.toString(token),
        Long.toString(fenceRetentionMillis));
  }

  /** For tests: the URI this backend connects with (one node or Sentinel), or the first Cluster seed. */
  RedisURI uri() {
    return uri;
  }

  String description() {
    return clusterSeeds != null ? RedisClusterConnections.describe(clusterSeeds) : RedisLockClient.describe(uri);
  }

  static AcquireReply toAcquireReply(List<Object> r) {
    if (r.size() == 1 && r.get(0) instanceof String token) { // acquire-fast.lua's grant: the token alone
      return AcquireReply.granted(Long.parseLong(token), 1);
    }
    long code = (Long) r.get(0);
    if (code == 1) {
      return AcquireReply.granted(Long.parseLong((String) r.get(1)), ((Long) r.get(2)).intValue());
    }
    if (code == 0) {
      return AcquireReply.busy((Long) r.get(1));
    }
    return AcquireReply.lostHold();
  }

  @Override
  public CompletionStage<Integer> release(String name, String owner, boolean all) {
    String lock = keys.lock(name);
    CompletionStage<Long> reply = run(RedisScript.RELEASE, ScriptOutputType.INTEGER,
        "release lock '" + name + "'", new String[] {lock}, // release.lua derives the waiters key
        owner, all ? "1" : "0", channelPrefix, EXCLUSIVE_TAG + name);
    return reply.thenApply(Long::intValue);
  }

  /**
   * Hand-offs in a row to waiters of one client before a release is a plain one that wakes the first
   * registered waiter, whichever client it belongs to: bounds how long one client's threads can pass the
   * lock among themselves while other clients wait.
   */
  static final int HAND_OFF_COHORT = 8;
  /**
   * How long a cohort's last release keeps the lock for the waiter it woke: long enough for a wake-up and
   * a round trip on a busy machine, short enough that a woken waiter that died costs the others little
   * (their backstop is the reservation's remaining time).
   */
  static final long HAND_OFF_RESERVATION_MILLIS = 100;

  /** Not with replica acknowledgements: a grant there is confirmed in a further step, which a hand-off skips. */
  @Override
  public boolean handsOffLocally() {
    return replicaAcks == 0;
  }

  @Override
  public CompletionStage<HandOffReply> releaseAndHandOff(String name, String owner, String nextOwner,
      long nextLeaseMillis, String nextWaiterId) {
    String lock = keys.lock(name);
    CompletionStage<List<Object>> reply = run(RedisScript.RELEASE_HANDOFF, ScriptOutputType.MULTI,
        "release lock '" + name + "'", new String[] {lock, RedisKeys.waiters(lock), RedisKeys.fence(lock)},
        owner, channelPrefix, EXCLUSIVE_TAG + name, nextOwner, leaseArg(nextLeaseMillis), nextWaiterId,
        fenceRetentionArg, tokenRule.arg, Integer.toString(HAND_OFF_COHORT),
        Long.toString(HAND_OFF_RESERVATION_MILLIS));
    return reply.thenApply(r -> {
      long code = (Long) r.get(0);
      if (code == 1) {
        wakeups.forget(nextWaiterId); // granted: no longer registered on the server
        return new HandOffReply(true, AcquireReply.granted(Long.parseLong((String) r.get(1)), 1));
      }
      return new HandOffReply(code == 0, null);
    });
  }

  /**
   * One {@code renew.lua} call per batch of at most {@value RenewalBatches#RENEW_CHUNK} keys, all pipelined on the
   * connection. On one node the batches simply follow the request order; on a Cluster each batch holds
   * keys of one slot only (a script's keys must share a slot, or the server answers {@code CROSSSLOT}).
   */
  @Override
  public CompletionStage<List<Boolean>> renew(List<RenewRequest> requests) {
    return renewInBatches(RedisScript.RENEW_LOCK, "lease(s)", requests, r -> new String[] {keys.lock(r.name())});
  }

  /**
   * Renews leases of any lock kind in batches; see {@link RenewalBatches#renew}.
   *
   * @param keysOf the script keys of one request, all under its lock's hash tag
   */
  CompletionStage<List<Boolean>> renewInBatches(RedisScript script, String what, List<RenewRequest> requests,
      Function<RenewRequest, String[]> keysOf) {
    return RenewalBatches.renew(this, cluster != null, script, what, requests, keysOf);
  }

  @Override
  public void cancelWait(String name, String waiterId) {
    forgetWaiter(waiterId);
    try {
      commands("remove a waiter").zrem(RedisKeys.waiters(keys.lock(name)), waiterId);
    } catch (RuntimeException e) {
      log.debug("could not remove waiter {} of '{}': {}", waiterId, name, e.toString());
    }
  }

  @Override
  public void passWakeup(String name, String goneWaiterId) { // ZPOPMIN already removed the woken waiter
    String lock = keys.lock(name);
    run(RedisScript.PASS_WAKEUP, ScriptOutputType.INTEGER, "pass a wake-up for '" + name + "'",
        new String[] {lock, RedisKeys.waiters(lock)}, channelPrefix, EXCLUSIVE_TAG + name, goneWaiterId)
        .whenComplete((v, f) -> {
          if (f != null) {
            log.debug("could not pass a wake-up for '{}': {}", name, f.toString());
          }
        });
  }

  @Override
  public CompletionStage<Optional<LockInfo>> inspect(String name) {
    String lock = keys.lock(name);
    CompletionStage<List<Object>> reply = run(RedisScript.INSPECT, ScriptOutputType.MULTI,
        "inspect lock '" + name + "'", new String[] {lock, RedisKeys.waiters(lock)});
    return reply.thenApply(r -> r.isEmpty() ? Optional.empty() : Optional.of(new LockInfo(name,
        (String) r.get(0), Integer.parseInt((String) r.get(1)), Long.parseLong((String) r.get(2)),
        Duration.ofMillis(Math.max(0, (Long) r.get(3))), ((Long) r.get(4)).intValue())));
  }

  @Override
  public CompletionStage<Boolean> forceUnlock(String name) {
    String lock = keys.lock(name);
    CompletionStage<Long> reply = run(RedisScript.FORCE_UNLOCK, ScriptOutputType.INTEGER,
        "force-unlock '" + name + "'", new String[] {lock, RedisKeys.waiters(lock)}, channelPrefix,
        EXCLUSIVE_TAG + name);
    return reply.thenApply(n -> n == 1L);
  }

  @Override
  public void close() {
    closed = true;
    connectedTo.clear();
    commands = null;
    ReplicaAckLanes l = lanes;
    if (l != null) {
      l.close();
    }
    if (cluster != null) {
      cluster.close();
    }
    try {
      if (pubsub != null) {
        pubsub.close();
      }
      if (connection != null) {
        connection.close();
      }
    } catch (RuntimeException e) {
      log.debug("closing Redis connections: {}", e.toString());
    }
    if (client != null) {
      client.shutdown(0, 2, TimeUnit.SECONDS);
    }
    if (resources != null && resources != sharedResources) {
      shutdown(resources);
    }
    client = null;
    resources = null;
  }


  /** Stops Lettuce's threads, waiting a bounded time; never throws. */
  static void shutdown(ClientResources resources) {
    try {
      resources.shutdown(0, 2, TimeUnit.SECONDS).get(5, TimeUnit.SECONDS);
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      log.debug("shutting down Lettuce resources: {}", e.toString());
    }
  }
}
