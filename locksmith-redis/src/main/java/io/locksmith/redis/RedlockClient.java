package io.locksmith.redis;

import io.lettuce.core.RedisURI;
import io.locksmith.ClientOptions;
import io.locksmith.internal.DefaultLockClient;
import io.locksmith.internal.ForwardingLockClient;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * Redlock: one lock over N independent Redis masters (N odd, at least 3), held while a majority holds
 * it. It survives the loss of a minority of nodes (N = 5 tolerates 2) where a single Redis, or a
 * master with asynchronous replicas, can lose a lock on failover.
 *
 * <pre>{@code
 * try (RedlockClient locks = RedlockClient.builder()
 *     .nodes("redis://r1:6379", "redis://r2:6379", "redis://r3:6379", "redis://r4:6379", "redis://r5:6379")
 *     .build()) {
 *   try (Lease lease = locks.lock("ledger").acquire(Duration.ofSeconds(5))) {
 *     ledger.append(entry, lease.fencingToken());
 *   }
 * }
 * }</pre>
 *
 * <p><b>How it works.</b> Acquire sends the single-node acquire script to every node in parallel, each
 * bounded by {@link Builder#nodeTimeout(Duration)}; it succeeds when a majority granted and validity
 * (lease − elapsed − drift, elapsed measured from before the first send) is left. Otherwise it releases
 * on every node, including those that did not answer, and retries after a random delay of up to
 * {@link Builder#retryDelay(Duration)}, or when a node's release notification wakes it, within the wait.
 * Renewal extends a lease only if a majority confirms it. Renewal, re-entry and release call a hold
 * lost only when more than N − quorum nodes no longer have it (then the lease is
 * {@link io.locksmith.LeaseState#LOST}); with fewer, the nodes that did not answer could still make a
 * majority, so the outcome is unknown: the lease is {@link io.locksmith.LeaseState#UNCERTAIN} after
 * such a renewal, such a re-entry throws {@link io.locksmith.BackendUnavailableException} and leaves the
 * lease as it was, and such a release throws it too. Release goes to every node.
 *
 * <p><b>Fencing tokens</b> come from per-node counters kept in step: the token is the highest value of
 * the granting majority, and it is written to a majority before the grant is reported. Tokens strictly
 * increase across grants as long as the nodes shared by two successive majorities keep their counters
 * (persistence with {@code appendfsync always}, or no restart); a node restarted empty mints from its
 * clock ({@link io.locksmith.FencingGuarantee#CLOCK_FLOORED}).
 *
 * <p><b>Assumptions</b> (see {@code docs/redlock.md}): a crashed node stays down longer than the longest
 * lease, or persists every write; node clocks do not jump by a large fraction of a lease. Neither a
 * pause of the holder nor a clock jump can be excluded by any lease; protect the resource with the
 * fencing token.
 *
 * <p>Thread-safe; create one per application and close it at shutdown.
 */
public final class RedlockClient extends ForwardingLockClient {
  private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(RedlockClient.class);
  /** Default bound on each node's reply, 250 ms: small next to leases, generous for a loaded host. */
  public static final Duration DEFAULT_NODE_TIMEOUT = Duration.ofMillis(250);
  /** Default upper bound of the random delay before retrying after a split or failed vote, 200 ms. */
  public static final Duration DEFAULT_RETRY_DELAY = Duration.ofMillis(200);

  private final RedlockBackend backend;

  private RedlockClient(RedlockBackend backend, ClientOptions options) {
    super(new DefaultLockClient(backend, options));
    this.backend = backend;
  }

  /** @return a builder with the defaults */
  public static Builder builder() {
    return new Builder();
  }

  /** @return the number of nodes that must agree: N / 2 + 1 */
  public int quorum() {
    return backend.quorum();
  }

  /** @return the nodes' addresses, passwords masked, in the order given */
  public List<String> nodes() {
    return backend.nodeDescriptions();
  }

  /** @return how many nodes have both connections up as far as this client knows (for tests) */
  int connectedNodes() {
    return backend.connectedNodes();
  }

  @Override
  public String toString() {
    return "RedlockClient[" + nodes() + ", id=" + clientId() + "]";
  }

  /** Builds a {@link RedlockClient}; not thread-safe. Everything is validated by {@link #build()}. */
  public static final class Builder {
    private List<String> nodes = List.of();
    private Duration nodeTimeout = DEFAULT_NODE_TIMEOUT;
    private Duration retryDelay = DEFAULT_RETRY_DELAY;
    private Duration waiterRecheck = RedisLockClient.DEFAULT_WAITER_RECHECK;
    private Duration fenceRetention = RedisLockClient.DEFAULT_FENCE_RETENTION;
    private ClientOptions options = ClientOptions.defaults();
    private RedisTls tls;

    private Builder() {}

    /**
     * @param uris one {@code redis://} or {@code rediss://} URI per independent master (not replicas
     *     of each other); an odd number, at least 3. Nodes are told apart by host and port: two URIs
     *     that differ only in the database number, the credentials, the scheme or the case of the host
     *     name are the same node and are rejected by {@link #build()}
     * @return this builder
     */
    public Builder nodes(String... uris) {
      return nodes(Arrays.asList(uris));
    }

    /**
     * @param uris see {@link #nodes(String...)}
     * @return this builder
     */
    public Builder nodes(List<String> uris) {
      this.nodes = new ArrayList<>(uris);
      return this;
    }

    /**
     * @param timeout bound on each node's reply and on connecting to it; keep it small next to the
     *     lease, since a slow node's time is taken from the lease's validity; default 250 ms, 1 ms to
     *     {@link RedisLockClient#MAX_COMMAND_TIMEOUT}
     * @return this builder
     */
    public Builder nodeTimeout(Duration timeout) {
      this.nodeTimeout = timeout;
      return this;
    }

    /**
     * @param delay upper bound of the random delay before retrying after a vote that gave nobody a
     *     majority; default 200 ms, 1 ms to {@link RedisLockClient#MAX_WAITER_RECHECK}
     * @return this builder
     */
    public Builder retryDelay(Duration delay) {
      this.retryDelay = delay;
      return this;
    }

    /**
     * @param interval longest time a waiter goes without re-checking by itself; default 5 s, 10 ms to
     *     {@link RedisLockClient#MAX_WAITER_RECHECK}
     * @return this builder
     */
    public Builder waiterRecheck(Duration interval) {
      this.waiterRecheck = interval;
      return this;
    }

    /**
     * @param retention how long each node keeps a lock name's token counter after its last grant;
     *     default 24 h, 1 s to {@link RedisLockClient#MAX_FENCE_RETENTION}
     * @return this builder
     */
    public Builder fenceRetention(Duration retention) {
      this.fenceRetention = retention;
      return this;
    }

    /**
     * @param options namespace, default lease policy, clock-drift allowance, clock, client name (part
     *     of owner ids and of every connection's name)
     * @return this builder
     */
    public Builder options(ClientOptions options) {
      this.options = options;
      return this;
    }

    /**
     * TLS settings for every node, as for {@link RedisLockClient.Builder#tls(RedisTls)}; every node URI
     * must then be {@code rediss://}.
     *
     * @param tls the settings, or null for none
     * @return this builder
     */
    public Builder tls(RedisTls tls) {
      this.tls = tls;
      return this;
    }

    /**
     * Validates the settings and connects to every node; a minority may be unreachable now, and is
     * retried when used. Once connected, the nodes reached report their server's run id, so that one
     * server given under two addresses (say {@code localhost} and {@code 127.0.0.1}, or directly and
     * through a port forward) is rejected too; a node unreachable at start is not checked.
     *
     * @return a connected client
     * @throws NullPointerException if a URI or setting is null
     * @throws IllegalArgumentException if the node count is even or below 3, a URI is invalid, two URIs
     *     name the same host and port (whatever the database), two reachable nodes turn out to be the
     *     same server, TLS settings come with a plain-text node URI, or a duration is out of its
     *     documented range
     * @throws io.locksmith.BackendConfigurationException if fewer than a majority of nodes can be reached
     *     and a node failed because the configuration does not fit it (TLS, unknown host, credentials)
     * @throws io.locksmith.BackendUnavailableException if fewer than a majority of nodes can be reached
     * @throws IllegalStateException if the Lettuce on the class path is older than this module supports
     *     (the message names the version found, the range supported and how to select another)
     */
    public RedlockClient build() {
      LettuceVersion.requireSupported();
      Objects.requireNonNull(nodeTimeout, "nodeTimeout");
      Objects.requireNonNull(retryDelay, "retryDelay");
      Objects.requireNonNull(waiterRecheck, "waiterRecheck");
      Objects.requireNonNull(fenceRetention, "fenceRetention");
      Objects.requireNonNull(options, "options");
      if (nodes.size() < 3 || nodes.size() % 2 == 0) {
        throw new IllegalArgumentException("Redlock needs an odd number of nodes, at least 3 (5 tolerates "
            + "the loss of 2), was " + nodes.size());
      }
      RedisLockClient.within("nodeTimeout", nodeTimeout, Duration.ofMillis(1), RedisLockClient.MAX_COMMAND_TIMEOUT);
      RedisLockClient.within("retryDelay", retryDelay, Duration.ofMillis(1), RedisLockClient.MAX_WAITER_RECHECK);
      RedisLockClient.within("waiterRecheck", waiterRecheck, Duration.ofMillis(10),
          RedisLockClient.MAX_WAITER_RECHECK);
      RedisLockClient.within("fenceRetention", fenceRetention, Duration.ofSeconds(1),
          RedisLockClient.MAX_FENCE_RETENTION);
      List<RedisURI> uris = new ArrayList<>();
      Map<String, RedisURI> seen = new HashMap<>();
      for (String node : nodes) {
        RedisURI uri = RedisLockClient.parseUri(Objects.requireNonNull(node, "node uri"), false, tls);
        RedisURI earlier = seen.putIfAbsent(address(uri), uri);
        if (earlier != null) {
          // the database number selects a keyspace inside one server, not another server: a "quorum"
          // of /0, /1 and /2 would be one process deciding alone
          throw new IllegalArgumentException("node " + RedisLockClient.describe(uri) + " is given twice (as "
              + RedisLockClient.describe(earlier) + "): Redlock tells nodes apart by host and port, whatever "
              + "the database, and they must be independent masters");
        }
        uri.setTimeout(nodeTimeout);
        uris.add(uri);
      }
      RedlockBackend backend = new RedlockBackend(uris, nodeTimeout, retryDelay, waiterRecheck, fenceRetention);
      backend.tls(tls != null ? tls : RedisTls.defaults());
      RedlockClient client = new RedlockClient(backend, options);
      log.info(RedisLockClient.startMessage("Redlock", client.clientId(), client.nodes().toString(), options, tls));
      return client;
    }
  }

  /**
   * A node's identity as written: host and port, never the database or the credentials. The host is
   * compared without case and without a trailing dot, and an IPv6 literal in its canonical form (so
   * {@code [::1]} and {@code [0:0:0:0:0:0:0:1]} are one node, and {@code [::ffff:127.0.0.1]} is
   * {@code 127.0.0.1}). Names are not resolved: {@code localhost}
   * and {@code 127.0.0.1}, or a DNS alias and its target, differ here; the client catches those at start
   * by comparing the servers' run ids ({@link RedlockBackend#open}).
   */
  static String address(RedisURI uri) {
    String host = uri.getHost().toLowerCase(Locale.ROOT);
    if (host.startsWith("[")) {
      try {
        // a bracketed literal is parsed, never looked up; an IPv4-mapped one is that IPv4 address
        InetAddress literal = InetAddress.getByName(host);
        host = literal instanceof Inet6Address ? "[" + literal.getHostAddress() + "]"
            : literal.getHostAddress();
      } catch (UnknownHostException notALiteral) {
        // Lettuce accepted it; compare it as written
      }
    } else if (host.endsWith(".")) {
      host = host.substring(0, host.length() - 1);
    }
    return host + ":" + uri.getPort();
  }
}
