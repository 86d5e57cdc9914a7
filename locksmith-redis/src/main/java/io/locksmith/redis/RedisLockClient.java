package io.locksmith.redis;

import io.lettuce.core.RedisURI;
import io.locksmith.ClientOptions;
import io.locksmith.internal.DefaultLockClient;
import java.time.Duration;
import java.util.Objects;

/**
 * Locks on one Redis server (or a master you point at directly), through Lettuce.
 *
 * <pre>{@code
 * try (RedisLockClient locks = RedisLockClient.create("redis://localhost:6379")) {
 *   try (Lease lease = locks.lock("invoice-42").acquire(Duration.ofSeconds(5))) {
 *     store.write(invoice, lease.fencingToken());
 *   }
 * }
 * }</pre>
 *
 * <p><b>How it works.</b> A lock is a hash {@code {owner, holds, token}} whose TTL is the lease.
 * Uncontended acquire and release are one {@code EVALSHA} each. A refused acquire registers the waiter
 * in the same script; a release wakes exactly one registered waiter through this client's single
 * pub/sub channel (no pattern subscriptions, no herd). A waiter re-checks by itself when the holder's
 * lease would run out, or after {@link Builder#waiterRecheck(Duration)}, whichever is sooner, so a lost
 * message or a waiter that died in the queue costs at most that long.
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
 * validity runs out.
 *
 * <p>Thread-safe; create one per application and close it at shutdown.
 */
public final class RedisLockClient extends ForwardingLockClient {
  /** Default command timeout, 2 s. */
  public static final Duration DEFAULT_COMMAND_TIMEOUT = Duration.ofSeconds(2);
  /** Default longest interval between a waiter's own re-checks, 5 s. */
  public static final Duration DEFAULT_WAITER_RECHECK = Duration.ofSeconds(5);
  /** Default retention of a lock name's last fencing token after its last grant, 24 h. */
  public static final Duration DEFAULT_FENCE_RETENTION = Duration.ofHours(24);

  private final RedisURI uri;

  private RedisLockClient(Builder b) {
    super(new DefaultLockClient(
        new RedisBackend(b.redisUri, b.commandTimeout, b.waiterRecheck, b.fenceRetention), b.options));
    this.uri = b.redisUri;
  }

  /**
   * Connects with default options.
   *
   * @param uri {@code redis://[user:password@]host[:port][/db]} or {@code rediss://…} for TLS
   * @return a connected client
   * @throws NullPointerException if {@code uri} is null
   * @throws IllegalArgumentException if {@code uri} is not a Redis URI
   * @throws io.locksmith.BackendUnavailableException if the server cannot be reached within the
   *     command timeout
   */
  public static RedisLockClient create(String uri) {
    return builder().uri(uri).build();
  }

  /** @return a builder with the defaults */
  public static Builder builder() {
    return new Builder();
  }

  /** @return the server address, with any password masked */
  public String serverDescription() {
    return describe(uri);
  }

  static String describe(RedisURI uri) {
    return (uri.isSsl() ? "rediss://" : "redis://") + uri.getHost() + ":" + uri.getPort()
        + (uri.getDatabase() != 0 ? "/" + uri.getDatabase() : "");
  }

  @Override
  public String toString() {
    return "RedisLockClient[" + serverDescription() + ", id=" + clientId() + "]";
  }

  /** Builds a {@link RedisLockClient}; not thread-safe. Everything is validated by {@link #build()}. */
  public static final class Builder {
    private String uri;
    private RedisURI redisUri;
    private Duration commandTimeout = DEFAULT_COMMAND_TIMEOUT;
    private Duration waiterRecheck = DEFAULT_WAITER_RECHECK;
    private Duration fenceRetention = DEFAULT_FENCE_RETENTION;
    private ClientOptions options = ClientOptions.defaults();

    private Builder() {}

    /**
     * @param uri {@code redis://[user:password@]host[:port][/db]}, or {@code rediss://…} for TLS;
     *     user and password authenticate with an ACL user (Redis 6+)
     * @return this builder
     */
    public Builder uri(String uri) {
      this.uri = uri;
      return this;
    }

    /**
     * @param timeout bound on every command and on connecting; default 2 s
     * @return this builder
     */
    public Builder commandTimeout(Duration timeout) {
      this.commandTimeout = timeout;
      return this;
    }

    /**
     * @param interval longest time a waiter goes without re-checking by itself (a backstop for a lost
     *     wake-up or a waiter that died in the queue); default 5 s
     * @return this builder
     */
    public Builder waiterRecheck(Duration interval) {
      this.waiterRecheck = interval;
      return this;
    }

    /**
     * @param retention how long a lock name's last token is kept after its last grant; past it, tokens
     *     rest on the time floor alone; default 24 h
     * @return this builder
     */
    public Builder fenceRetention(Duration retention) {
      this.fenceRetention = retention;
      return this;
    }

    /**
     * @param options namespace, default lease policy, clock
     * @return this builder
     */
    public Builder options(ClientOptions options) {
      this.options = options;
      return this;
    }

    /**
     * Validates the settings and connects.
     *
     * @return a connected client
     * @throws NullPointerException if the URI or a setting is null
     * @throws IllegalArgumentException if the URI is not a Redis URI or a duration is out of range
     * @throws io.locksmith.BackendUnavailableException if the server cannot be reached within the
     *     command timeout
     */
    public RedisLockClient build() {
      Objects.requireNonNull(uri, "uri");
      Objects.requireNonNull(commandTimeout, "commandTimeout");
      Objects.requireNonNull(waiterRecheck, "waiterRecheck");
      Objects.requireNonNull(fenceRetention, "fenceRetention");
      Objects.requireNonNull(options, "options");
      redisUri = parseUri(uri);
      atLeast("commandTimeout", commandTimeout, Duration.ofMillis(1));
      atLeast("waiterRecheck", waiterRecheck, Duration.ofMillis(10));
      atLeast("fenceRetention", fenceRetention, Duration.ofSeconds(1));
      redisUri.setTimeout(commandTimeout);
      return new RedisLockClient(this);
    }
  }

  /** @throws IllegalArgumentException if {@code uri} is not a redis:// or rediss:// URI */
  static RedisURI parseUri(String uri) {
    if (!uri.startsWith("redis://") && !uri.startsWith("rediss://")) {
      throw new IllegalArgumentException("uri must start with redis:// or rediss://, was '"
          + uri.replaceAll("//[^@/]*@", "//***@") + "'");
    }
    try {
      return RedisURI.create(uri);
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("not a valid Redis URI: " + e.getMessage(), e);
    }
  }

  /** @throws IllegalArgumentException if {@code d} is shorter than {@code min} */
  static void atLeast(String what, Duration d, Duration min) {
    if (d.compareTo(min) < 0) {
      throw new IllegalArgumentException(what + " must be at least " + min + ", was " + d);
    }
  }
}
