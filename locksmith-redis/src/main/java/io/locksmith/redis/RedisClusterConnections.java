package io.locksmith.redis;

import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.SslOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.cluster.pubsub.StatefulRedisClusterPubSubConnection;
import io.lettuce.core.protocol.ConnectionIntent;
import io.lettuce.core.pubsub.RedisPubSubListener;
import io.lettuce.core.resource.ClientResources;
import io.locksmith.BackendUnavailableException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The connections of a {@link RedisBackend} on a Redis Cluster: one Lettuce {@link RedisClusterClient}
 * with a multiplexed cluster command connection (Lettuce routes each command by the slot of its first key,
 * follows {@code MOVED} and {@code ASK}, and refreshes the slot map periodically and whenever a redirect, a
 * reconnecting node or an uncovered slot suggests it changed) and one pub/sub connection.
 *
 * <p><b>Wake-ups.</b> The pub/sub connection subscribes to the client's channel with classic {@code
 * SUBSCRIBE} on one node of the cluster; a classic {@code PUBLISH} (run by the scripts on the master of
 * the lock's slot) is broadcast over the cluster bus to every node, so the subscriber hears it wherever it
 * is connected. When that node goes away, Lettuce reconnects the pub/sub connection to the next node of
 * the slot map (round robin) and subscribes again.
 *
 * <p><b>Replica acknowledgement.</b> {@code WAIT} counts the replicas that have the writes of <em>the
 * connection it is sent on</em>, and blocks that connection while it waits. So an acknowledged grant runs
 * on a cluster connection of its own ({@link #openLane}, lent by {@link ReplicaAckLanes}), and its {@code
 * WAIT} goes on that lane's node connection to the slot's master: the one that carried the grant.
 *
 * <p>Thread-safe after {@link #connect}; every call is bounded by the command timeout.
 */
final class RedisClusterConnections {
  private static final Logger log = LoggerFactory.getLogger(RedisClusterConnections.class);
  /** Periodic slot-map refresh: a backstop for changes no command has run into. */
  static final Duration PERIODIC_REFRESH = Duration.ofSeconds(5);
  /** Least time between two refreshes triggered by redirects or reconnecting nodes (Lettuce: 30 s). */
  static final Duration ADAPTIVE_REFRESH_MIN_INTERVAL = Duration.ofMillis(500);
  /** Reconnect attempts of a node connection after which its node is assumed gone and the map refreshed. */
  private static final int RECONNECTS_BEFORE_REFRESH = 3;

  private final List<RedisURI> seeds;
  private final Duration commandTimeout;
  private final RedisClusterClient client;
  private volatile StatefulRedisClusterConnection<String, String> connection;
  private volatile StatefulRedisClusterPubSubConnection<String, String> pubsub;
  private final Map<String, String> evictionPolicies = new ConcurrentHashMap<>();

  /**
   * @param seeds nodes to learn the slot map from; any one that answers is enough
   * @param commandTimeout bound on every command, on connecting and on each topology query
   * @param resources Lettuce's threads and reconnect delay, owned by the caller
   * @param ssl TLS settings for {@code rediss} seeds, or null
   * @param scripts the scripts to preload on every node
   */
  private final RedisScript[] scripts;

  RedisClusterConnections(List<RedisURI> seeds, Duration commandTimeout, ClientResources resources,
      SslOptions ssl, RedisScript[] scripts) {
    this.scripts = scripts.clone();
    this.seeds = List.copyOf(seeds);
    this.commandTimeout = commandTimeout;
    this.client = RedisClusterClient.create(resources, this.seeds);
    ClusterClientOptions.Builder options = ClusterClientOptions.builder();
    if (ssl != null) {
      options.sslOptions(ssl);
    }
    client.setOptions(options
        .timeoutOptions(TimeoutOptions.enabled(commandTimeout))
        .socketOptions(SocketOptions.builder().connectTimeout(commandTimeout).keepAlive(true).build())
        // fail fast while a node is disconnected (e.g. a crashed master before its replica takes over)
        .disconnectedBehavior(io.lettuce.core.ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
        .autoReconnect(true)
        .maxRedirects(5)
        .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
            .enablePeriodicRefresh(PERIODIC_REFRESH)
            // MOVED, ASK, persistent reconnects, uncovered slots, unknown nodes
            .enableAllAdaptiveRefreshTriggers()
            .adaptiveRefreshTriggersTimeout(ADAPTIVE_REFRESH_MIN_INTERVAL)
            .refreshTriggersReconnectAttempts(RECONNECTS_BEFORE_REFRESH)
            .dynamicRefreshSources(true)
            .closeStaleConnections(true)
            .build())
        .build());
  }

  /**
   * Learns the slot map from the seeds, opens the command connection, preloads the scripts on every node
   * (best effort: a node that missed them gets them on first use through {@code EVAL}), opens the pub/sub
   * connection and subscribes to {@code channel}.
   *
   * @param listener receives the messages of the pub/sub connection
   * @return completes with the command interface once subscribed, or exceptionally (everything opened so
   *     far is then closed)
   */
  CompletableFuture<RedisClusterAsyncCommands<String, String>> connect(String channel,
      RedisPubSubListener<String, String> listener) {
    List<StatefulConnection<String, String>> opened = new ArrayList<>();
    CompletableFuture<StatefulRedisClusterConnection<String, String>> first;
    try {
      // learn the slot map first: connectAsync does not load it by itself
      first = client.refreshPartitionsAsync().toCompletableFuture()
          .thenCompose(v -> LostHandshake.connect(() -> client.connectAsync(Utf8Codec.INSTANCE)));
    } catch (RuntimeException e) {
      first = CompletableFuture.failedFuture(e);
    }
    CompletableFuture<RedisClusterAsyncCommands<String, String>> done = first.thenCompose(conn -> {
      opened.add(conn);
      conn.setTimeout(commandTimeout);
      List<CompletableFuture<Void>> loads = new ArrayList<>();
      for (RedisScript script : scripts) {
        loads.add(conn.async().scriptLoad(script.text).toCompletableFuture().handle((sha, f) -> {
          if (f != null) {
            log.info("could not preload {} on every node of {} ({}); nodes without it get it on first use",
                script, description(), f.toString());
          } else if (!script.sha.equals(sha)) {
            throw new IllegalStateException("server digest " + sha + " differs for " + script);
          }
          return null;
        }));
      }
      checkEvictionPolicies(conn, loads);
      return CompletableFuture.allOf(loads.toArray(new CompletableFuture<?>[0]))
          .thenCompose(v -> LostHandshake.connect(() -> client.connectPubSubAsync(Utf8Codec.INSTANCE)))
          .thenCompose(ps -> {
            opened.add(ps);
            ps.setTimeout(commandTimeout);
            ps.addListener(listener);
            return ps.async().subscribe(channel).toCompletableFuture().thenApply(v -> {
              pubsub = ps;
              connection = conn;
              return conn.async();
            });
          });
    });
    return done.whenComplete((v, failure) -> {
      if (failure != null) {
        // closeAsync, never close(): this runs on a Lettuce I/O thread, whose channels close() would wait for
        for (StatefulConnection<String, String> c : opened) {
          c.closeAsync().whenComplete((ignored, e) -> {
            if (e != null) {
              log.debug("closing a half-open cluster connection: {}", e.toString());
            }
          });
        }
      }
    });
  }

  /**
   * Asks every master of the slot map for its eviction policy ({@link EvictionPolicyCheck}), in parallel with
   * the script loads; each check ends within the command timeout (plus connecting to the node) and never
   * fails. Replicas are not asked: configure them alike, a failover promotes one.
   */
  private void checkEvictionPolicies(StatefulRedisClusterConnection<String, String> conn,
      List<CompletableFuture<Void>> pending) {
    for (RedisClusterNode node : conn.getPartitions()) {
      RedisURI at = node.getUri();
      if (at == null || !node.getRole().isUpstream()) {
        continue;
      }
      String name = (at.getHost().indexOf(':') >= 0 ? "[" + at.getHost() + "]" : at.getHost()) + ":" + at.getPort();
      CompletableFuture<String> check;
      try {
        check = conn.getConnectionAsync(at.getHost(), at.getPort(), ConnectionIntent.WRITE)
            .thenCompose(c -> EvictionPolicyCheck.check(c.async(), name));
      } catch (RuntimeException e) {
        check = CompletableFuture.failedFuture(e);
      }
      pending.add(check.handle((policy, f) -> {
        if (policy != null) {
          evictionPolicies.put(name, policy);
        } else if (f != null) {
          log.info("could not read maxmemory-policy of {}: {}", name, f.toString());
        }
        return null;
      }));
    }
  }

  /** @return the {@code maxmemory-policy} each master reported at connect, by address */
  Map<String, String> evictionPolicies() {
    return Map.copyOf(evictionPolicies);
  }

  /**
   * Opens a lane for acknowledged grants ({@link ReplicaAckLanes}): a cluster connection of its own, which
   * routes the grant's script by slot like the shared one and opens its node connections when first used.
   * Its {@code WAIT} goes to this lane's connection to the master of the key's slot: the one that carried
   * the grant.
   */
  CompletableFuture<ReplicaAckLanes.Lane> openLane() {
    CompletableFuture<StatefulRedisClusterConnection<String, String>> opening =
        LostHandshake.connect(() -> client.connectAsync(Utf8Codec.INSTANCE)).thenCompose(this::connectMasters);
    return opening.thenApply(conn -> {
      conn.setTimeout(commandTimeout);
      return new ReplicaAckLanes.Lane() {
        @Override
        public RedisClusterAsyncCommands<String, String> commands() {
          return conn.async();
        }

        @Override
        public CompletableFuture<Long> waitForReplicas(String key, int replicas, long timeoutMillis) {
          return RedisClusterConnections.this.waitForReplicas(conn, key, replicas, timeoutMillis);
        }

        @Override
        public void close() {
          conn.closeAsync();
        }
      };
    });
  }

  /**
   * Opens {@code conn}'s connections to every master of the slot map before the lane is lent. Lettuce 7
   * rejects a command routed to a node connection it has only begun to open ("Currently not connected",
   * with {@code REJECT_COMMANDS}), where 6.x waited for it; the shared connection has its node connections
   * open from the script preload, a fresh lane had none. A master that cannot be reached now is left to
   * the command's own failure.
   *
   * @return completes with {@code conn} once each master's connection is open or has failed
   */
  private CompletableFuture<StatefulRedisClusterConnection<String, String>> connectMasters(
      StatefulRedisClusterConnection<String, String> conn) {
    List<CompletableFuture<?>> nodes = new ArrayList<>();
    for (RedisClusterNode node : conn.getPartitions()) {
      RedisURI at = node.getUri();
      if (at != null && node.getRole().isUpstream()) {
        try {
          nodes.add(conn.getConnectionAsync(at.getHost(), at.getPort(), ConnectionIntent.WRITE)
              .handle((c, f) -> null));
        } catch (RuntimeException e) {
          log.debug("opening the connection to {}:{} for a lane: {}", at.getHost(), at.getPort(), e.toString());
        }
      }
    }
    return CompletableFuture.allOf(nodes.toArray(new CompletableFuture<?>[0])).thenApply(v -> conn);
  }

  /**
   * {@code WAIT replicas timeoutMillis} on {@code c}'s connection to the master that owns {@code key}'s slot
   * in the slot map: the node connection Lettuce routed the grant on, so the count covers the grant.
   *
   * @return the number of replicas that acknowledged; exceptionally if the slot has no known master or
   *     the node cannot be reached
   */
  private CompletableFuture<Long> waitForReplicas(StatefulRedisClusterConnection<String, String> c, String key,
      int replicas, long timeoutMillis) {
    int slot = SlotHash.getSlot(key);
    RedisClusterNode master = c.getPartitions().getMasterBySlot(slot);
    if (master == null || master.getUri() == null) {
      return CompletableFuture.failedFuture(new BackendUnavailableException(
          "no master of slot " + slot + " is known in " + description()));
    }
    RedisURI at = master.getUri();
    return c.getConnectionAsync(at.getHost(), at.getPort(), ConnectionIntent.WRITE)
        .thenCompose(node -> node.async().waitForReplication(replicas, timeoutMillis).toCompletableFuture());
  }

  /** @return the seeds without credentials, e.g. {@code redis-cluster://h1:7000,h2:7000} */
  String description() {
    return describe(seeds);
  }

  /** The seed list of a cluster URI without credentials. */
  static String describe(List<RedisURI> seeds) {
    StringJoiner j = new StringJoiner(",", seeds.get(0).isSsl() ? "rediss-cluster://" : "redis-cluster://", "");
    for (RedisURI seed : seeds) {
      String host = seed.getHost();
      j.add((host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + seed.getPort());
    }
    return j.toString();
  }

  /** Stops topology refreshes, closes both connections and the client; never throws. */
  void close() {
    try {
      client.suspendTopologyRefresh();
    } catch (RuntimeException e) {
      log.debug("suspending topology refresh: {}", e.toString());
    }
    try {
      if (pubsub != null) {
        pubsub.close();
      }
      if (connection != null) {
        connection.close();
      }
    } catch (RuntimeException e) {
      log.debug("closing Redis Cluster connections: {}", e.toString());
    }
    try {
      client.shutdown(0, 2, TimeUnit.SECONDS);
    } catch (RuntimeException e) {
      log.debug("shutting down the Redis Cluster client: {}", e.toString());
    }
  }
}
