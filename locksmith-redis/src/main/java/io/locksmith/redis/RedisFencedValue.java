package io.locksmith.redis;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.sync.RedisScriptingCommands;
import io.locksmith.NoFencingTokenException;
import io.locksmith.StaleTokenException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

/**
 * The resource side of fencing for one Redis string value that a lock protects: the value's key and a
 * fence key beside it (same hash slot) that holds the largest fencing token admitted so far. It runs on
 * <em>your</em> connection to the Redis that holds the data, which need not be the lock's server.
 *
 * <p><b>The token is admitted at the first access.</b> {@link #read(long)} checks the caller's token
 * against the fence and raises the fence to it in the same script that reads the value;
 * {@link #write(long, String)} checks again and writes in one script. A token smaller than the fence is
 * refused with {@link StaleTokenException}; an equal one is the same holder acting again. Admitting at
 * the read is what makes a read-modify-write safe: if only the write were checked, a holder paused
 * between its read and its write could wake after the next holder's read, write first (its token would
 * still be the largest the fence had seen), and the next holder's write would then overwrite it with a
 * value computed from the older read: one update lost. With admission at the read, the next holder's
 * read raises the fence and the paused holder's write is refused.
 *
 * <pre>{@code
 * RedisFencedValue stock = RedisFencedValue.of(connection.sync(), "stock:42");
 * try (Lease lease = locks.lock("stock:42").acquire(Duration.ofSeconds(5))) {
 *   stock.update(lease.fencingToken(), v -> Integer.toString(Integer.parseInt(v.orElse("0")) - 1));
 * } catch (StaleTokenException e) {
 *   // superseded by a later holder: stop, do not retry with the same token
 * }
 * }</pre>
 *
 * <p>Every reader and writer of the value must go through this class with its token: a plain {@code GET}
 * followed by {@link #write(long, String)} is the write-only fence again. The fence key has no expiry;
 * delete it with the data. Tokens are compared as Lua numbers (doubles), so they must lie in
 * [1, 2<sup>53</sup>]; Locksmith's tokens (about 1.7 × 10<sup>15</sup>) do. Token 0 is
 * {@link io.locksmith.Lease#NO_FENCING_TOKEN}, what a degraded (JVM-local) lease carries: it is refused
 * with {@link NoFencingTokenException} before anything is sent.
 *
 * <p><b>Thread-safety.</b> Immutable, and thread-safe if the given commands are (Lettuce's synchronous
 * commands of one connection are). <b>Failure.</b> Each call is one script on the given connection,
 * bounded by that connection's timeout; its errors (timeouts, connection loss, Lettuce's
 * {@code RedisException} family) propagate unchanged. A call that timed out may have been applied.
 */
public final class RedisFencedValue {
  /** The largest token a Lua double represents exactly. */
  static final long MAX_TOKEN = 1L << 53;

  // KEYS[1] value, KEYS[2] fence; ARGV[1] token. Returns {1, value or nil} admitted, {0, fence} stale.
  static final String READ_SCRIPT = """
      local seen = redis.call('GET', KEYS[2])
      if seen and tonumber(ARGV[1]) < tonumber(seen) then
        return {0, seen}
      end
      if seen ~= ARGV[1] then
        redis.call('SET', KEYS[2], ARGV[1])
      end
      return {1, redis.call('GET', KEYS[1])}
      """;

  // KEYS[1] value, KEYS[2] fence; ARGV[1] token, ARGV[2] new value. Returns {1} written, {0, fence} stale.
  static final String WRITE_SCRIPT = """
      local seen = redis.call('GET', KEYS[2])
      if seen and tonumber(ARGV[1]) < tonumber(seen) then
        return {0, seen}
      end
      if seen ~= ARGV[1] then
        redis.call('SET', KEYS[2], ARGV[1])
      end
      redis.call('SET', KEYS[1], ARGV[2])
      return {1}
      """;

  private static final String READ_SHA = sha1(READ_SCRIPT);
  private static final String WRITE_SHA = sha1(WRITE_SCRIPT);

  private final RedisScriptingCommands<String, String> redis;
  private final String[] keys;

  private RedisFencedValue(RedisScriptingCommands<String, String> redis, String key, String fenceKey) {
    this.redis = redis;
    this.keys = new String[] {key, fenceKey};
  }

  /**
   * The fenced value at {@code key}, with its fence at {@code key + ":fence"} if the key has a hash tag
   * ({@code {order:42}:stock} → {@code {order:42}:stock:fence}), otherwise at {@code "{" + key +
   * "}:fence"}; both are in the key's hash slot.
   *
   * @param redis synchronous commands of a connection to the Redis holding the data (standalone or
   *     Cluster)
   * @param key the value's key
   * @return the fenced value
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code key} is empty, or has braces but no hash tag (then no
   *     fence key in its slot can be derived: use {@link #of(RedisScriptingCommands, String, String)})
   */
  public static RedisFencedValue of(RedisScriptingCommands<String, String> redis, String key) {
    Objects.requireNonNull(key, "key");
    return of(redis, key, fenceKeyFor(key));
  }

  /**
   * The fenced value at {@code key}, with its fence at {@code fenceKey}. On a Cluster both must be in one
   * hash slot (give them the same hash tag), or every call fails with {@code CROSSSLOT}.
   *
   * @param redis synchronous commands of a connection to the Redis holding the data
   * @param key the value's key
   * @param fenceKey the key that keeps the largest admitted token; used for nothing else
   * @return the fenced value
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if a key is empty or the two keys are equal
   */
  public static RedisFencedValue of(RedisScriptingCommands<String, String> redis, String key, String fenceKey) {
    Objects.requireNonNull(redis, "redis");
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(fenceKey, "fenceKey");
    if (key.isEmpty() || fenceKey.isEmpty()) {
      throw new IllegalArgumentException("the value key and the fence key must not be empty");
    }
    if (key.equals(fenceKey)) {
      throw new IllegalArgumentException("the fence key must differ from the value key '" + key + "'");
    }
    return new RedisFencedValue(redis, key, fenceKey);
  }

  /** @return the value's key */
  public String key() {
    return keys[0];
  }

  /** @return the fence key, which keeps the largest token admitted for the value */
  public String fenceKey() {
    return keys[1];
  }

  /**
   * Admits {@code token} and reads the value, in one script: the first access of the value under the
   * lock. From now on every holder with a smaller token is refused, even one that read earlier.
   *
   * @param token the lease's fencing token
   * @return the value, or empty if the key does not exist
   * @throws StaleTokenException if a larger token has already been admitted; nothing was read or changed
   * @throws NoFencingTokenException if {@code token} is {@link io.locksmith.Lease#NO_FENCING_TOKEN} (0, a
   *     degraded lease's); nothing is sent
   * @throws IllegalArgumentException if {@code token} is negative or above 2<sup>53</sup>
   * @throws io.lettuce.core.RedisException if the command fails or times out (see the class comment)
   */
  public Optional<String> read(long token) {
    List<Object> reply = run(READ_SHA, READ_SCRIPT, checked(token));
    stale(reply, token);
    return Optional.ofNullable((String) reply.get(1));
  }

  /**
   * Checks {@code token} and writes {@code value}, in one script. Call it after {@link #read(long)} with
   * the same token (or as the first access, for a write that does not depend on the old value).
   *
   * @param token the lease's fencing token
   * @param value the new value
   * @throws StaleTokenException if a larger token has been admitted; nothing was written
   * @throws NullPointerException if {@code value} is null
   * @throws NoFencingTokenException if {@code token} is {@link io.locksmith.Lease#NO_FENCING_TOKEN} (0, a
   *     degraded lease's); nothing is sent
   * @throws IllegalArgumentException if {@code token} is negative or above 2<sup>53</sup>
   * @throws io.lettuce.core.RedisException if the command fails or times out (see the class comment)
   */
  public void write(long token, String value) {
    Objects.requireNonNull(value, "value");
    stale(run(WRITE_SHA, WRITE_SCRIPT, checked(token), value), token);
  }

  /**
   * Read-modify-write in one call: {@link #read(long)}, then {@code change} on the calling thread, then
   * {@link #write(long, String)} of its result. The lock keeps other holders out meanwhile; the fence
   * refuses the write if a later holder was admitted since the read.
   *
   * @param token the lease's fencing token
   * @param change computes the new value from the current one (empty if the key does not exist)
   * @return the value written
   * @throws StaleTokenException if a larger token was admitted before the read or before the write;
   *     in the second case the read happened and {@code change} ran, but nothing was written
   * @throws NullPointerException if {@code change} is null or returns null (nothing is written)
   * @throws NoFencingTokenException if {@code token} is {@link io.locksmith.Lease#NO_FENCING_TOKEN} (0, a
   *     degraded lease's); nothing is sent
   * @throws IllegalArgumentException if {@code token} is negative or above 2<sup>53</sup>
   * @throws io.lettuce.core.RedisException if a command fails or times out (see the class comment)
   * @throws RuntimeException whatever {@code change} throws (nothing is written)
   */
  public String update(long token, Function<Optional<String>, String> change) {
    Objects.requireNonNull(change, "change");
    String next = Objects.requireNonNull(change.apply(read(token)), "the new value");
    write(token, next);
    return next;
  }

  @Override
  public String toString() {
    return "RedisFencedValue[" + keys[0] + ", fence " + keys[1] + "]";
  }

  private String checked(long token) {
    if (token == io.locksmith.Lease.NO_FENCING_TOKEN) {
      // a degraded (JVM-local) lease: refused before anything is sent, so the fence is untouched
      throw new NoFencingTokenException(keys[0], token, 0);
    }
    if (token < 0 || token > MAX_TOKEN) {
      throw new IllegalArgumentException("a fencing token must be between 1 and 2^53 to compare exactly "
          + "in a Redis script, was " + token);
    }
    return Long.toString(token);
  }

  private void stale(List<Object> reply, long token) {
    if (((Long) reply.get(0)) == 0L) {
      throw new StaleTokenException(keys[0], token, Long.parseLong((String) reply.get(1)));
    }
  }

  private List<Object> run(String sha, String script, String... args) {
    try {
      return redis.evalsha(sha, ScriptOutputType.MULTI, keys, args);
    } catch (RedisNoScriptException e) {
      return redis.eval(script, ScriptOutputType.MULTI, keys, args);
    } catch (RedisCommandExecutionException e) {
      if (String.valueOf(e.getMessage()).startsWith("NOSCRIPT")) {
        return redis.eval(script, ScriptOutputType.MULTI, keys, args);
      }
      throw e;
    }
  }

  /** {@code key + ":fence"} in the key's own hash tag, or a tag made of the whole key. */
  static String fenceKeyFor(String key) {
    int open = key.indexOf('{');
    if (open >= 0) {
      int close = key.indexOf('}', open + 1);
      if (close > open + 1) {
        return key + ":fence"; // the key's slot is its tag's, and so is this
      }
    }
    if (key.indexOf('{') >= 0 || key.indexOf('}') >= 0) {
      throw new IllegalArgumentException("key '" + key + "' has braces but no hash tag; give the fence key "
          + "explicitly, in the same hash slot");
    }
    if (key.isEmpty()) {
      throw new IllegalArgumentException("the value key must not be empty");
    }
    return "{" + key + "}:fence"; // the tag is the whole key, so the slot is the key's
  }

  private static String sha1(String script) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1")
          .digest(script.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-1 is required of every Java platform", e);
    }
  }
}
