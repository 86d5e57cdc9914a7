package io.locksmith.redis;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.sync.RedisScriptingCommands;
import io.locksmith.Lease;
import io.locksmith.NoFencingTokenException;
import io.locksmith.StaleTokenException;
import io.locksmith.recipes.StockStore;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * A {@link StockStore} in Redis, for {@link io.locksmith.recipes.SegmentedStock}: one hash per item at
 * {@code <prefix>:<item>} with the segment count ({@code n}) and, per segment {@code s}, its units
 * ({@code u:<s>}) and its fence ({@code f:<s>}, the largest token admitted). Each operation is one
 * script, so the fence check and the access it guards are atomic, and a write to several segments is
 * all or none. One key per item keeps an item in one hash slot (Redis Cluster works; the key is hot, but
 * a script of a few field operations is microseconds next to a lock's hold time).
 *
 * <p>It runs on <em>your</em> connection to the Redis that holds the stock, which need not be the lock
 * server. Tokens are compared as Lua numbers (doubles), exact up to 2<sup>53</sup>; Locksmith's tokens
 * are about 1.7 × 10<sup>15</sup>. Token 0 ({@link Lease#NO_FENCING_TOKEN}, a degraded lease's) is
 * refused before anything is sent. The hash has no expiry.
 *
 * <p><b>Thread-safety.</b> Immutable, and thread-safe if the given commands are (Lettuce's synchronous
 * commands of one connection are). <b>Failure.</b> Each call is one script bounded by the connection's
 * timeout; Lettuce's {@code RedisException}s (timeout, connection loss) propagate unchanged, and a write
 * that timed out may have been applied.
 */
public final class RedisStockStore implements StockStore {
  /** The default key prefix. */
  public static final String DEFAULT_PREFIX = "locksmith-stock";

  // KEYS[1] item hash; ARGV[1] segments. Returns the segment count now stored.
  static final String CREATE = """
      local n = redis.call('HGET', KEYS[1], 'n')
      if n then return tonumber(n) end
      local fields = {'n', ARGV[1]}
      for i = 0, tonumber(ARGV[1]) - 1 do
        fields[#fields + 1] = 'u:' .. i
        fields[#fields + 1] = '0'
        fields[#fields + 1] = 'f:' .. i
        fields[#fields + 1] = '0'
      end
      redis.call('HSET', KEYS[1], unpack(fields))
      return tonumber(ARGV[1])
      """;

  // KEYS[1] item hash; ARGV[1] segment, ARGV[2] token.
  // Returns {1, units} admitted, {0, fence} stale, {-1} no such item or segment.
  static final String READ = """
      local n = tonumber(redis.call('HGET', KEYS[1], 'n'))
      if not n or tonumber(ARGV[1]) >= n then return {-1} end
      local fence = redis.call('HGET', KEYS[1], 'f:' .. ARGV[1])
      if tonumber(ARGV[2]) < tonumber(fence) then return {0, fence} end
      if tonumber(ARGV[2]) > tonumber(fence) then redis.call('HSET', KEYS[1], 'f:' .. ARGV[1], ARGV[2]) end
      return {1, redis.call('HGET', KEYS[1], 'u:' .. ARGV[1])}
      """;

  // KEYS[1] item hash; ARGV[1] count, then per write: segment, token, units.
  // Returns {1} written, {0, segment, fence} stale (nothing written), {-1, segment} no such item/segment.
  static final String WRITE = """
      local n = tonumber(redis.call('HGET', KEYS[1], 'n'))
      if not n then return {-1, '-'} end
      local count = tonumber(ARGV[1])
      for i = 0, count - 1 do
        local s = ARGV[2 + 3 * i]
        if tonumber(s) >= n then return {-1, s} end
        local fence = redis.call('HGET', KEYS[1], 'f:' .. s)
        if tonumber(ARGV[3 + 3 * i]) < tonumber(fence) then return {0, s, fence} end
      end
      for i = 0, count - 1 do
        local s = ARGV[2 + 3 * i]
        local fence = redis.call('HGET', KEYS[1], 'f:' .. s)
        if tonumber(ARGV[3 + 3 * i]) > tonumber(fence) then redis.call('HSET', KEYS[1], 'f:' .. s, ARGV[3 + 3 * i]) end
        redis.call('HSET', KEYS[1], 'u:' .. s, ARGV[4 + 3 * i])
      end
      return {1}
      """;

  // KEYS[1] item hash. Returns the units of every segment, in order; empty if no such item.
  static final String UNITS = """
      local n = tonumber(redis.call('HGET', KEYS[1], 'n'))
      if not n then return {} end
      local fields = {}
      for i = 0, n - 1 do fields[#fields + 1] = 'u:' .. i end
      return redis.call('HMGET', KEYS[1], unpack(fields))
      """;

  private static final String CREATE_SHA = sha1(CREATE);
  private static final String READ_SHA = sha1(READ);
  private static final String WRITE_SHA = sha1(WRITE);
  private static final String UNITS_SHA = sha1(UNITS);

  private final RedisScriptingCommands<String, String> redis;
  private final String prefix;

  private RedisStockStore(RedisScriptingCommands<String, String> redis, String prefix) {
    this.redis = redis;
    this.prefix = prefix;
  }

  /**
   * A store under {@link #DEFAULT_PREFIX}.
   *
   * @param redis synchronous commands of a connection to the Redis holding the stock (standalone or
   *     Cluster)
   * @return the store
   * @throws NullPointerException if {@code redis} is null
   */
  public static RedisStockStore of(RedisScriptingCommands<String, String> redis) {
    return of(redis, DEFAULT_PREFIX);
  }

  /**
   * @param redis synchronous commands of a connection to the Redis holding the stock
   * @param prefix what every item's key starts with ({@code <prefix>:<item>})
   * @return the store
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code prefix} is empty
   */
  public static RedisStockStore of(RedisScriptingCommands<String, String> redis, String prefix) {
    Objects.requireNonNull(redis, "redis");
    Objects.requireNonNull(prefix, "prefix");
    if (prefix.isEmpty()) {
      throw new IllegalArgumentException("the key prefix must not be empty");
    }
    return new RedisStockStore(redis, prefix);
  }

  /**
   * @param item an item
   * @return the key of its hash
   */
  public String key(String item) {
    return prefix + ":" + Objects.requireNonNull(item, "item");
  }

  /**
   * {@inheritDoc}
   *
   * @throws IllegalArgumentException if {@code segments} is less than 1 or more than 1024
   * @throws io.lettuce.core.RedisException if the command fails or times out
   */
  @Override
  public int create(String item, int segments) {
    if (segments < 1 || segments > 1024) {
      throw new IllegalArgumentException("segments must be from 1 to 1024, was " + segments);
    }
    Long stored = run(CREATE_SHA, CREATE, ScriptOutputType.INTEGER, key(item), Integer.toString(segments));
    return stored.intValue();
  }

  /**
   * {@inheritDoc}
   *
   * @throws IllegalArgumentException also if {@code token} is negative or above 2<sup>53</sup>
   * @throws io.lettuce.core.RedisException if the command fails or times out
   */
  @Override
  public long read(String item, int segment, long token) {
    String t = checked(item, segment, token);
    List<Object> reply = run(READ_SHA, READ, ScriptOutputType.MULTI, key(item), Integer.toString(segment), t);
    long status = (Long) reply.get(0);
    if (status < 0) {
      throw new IllegalArgumentException("stock item '" + item + "' has no segment " + segment);
    }
    if (status == 0) {
      throw new StaleTokenException(item + "#" + segment, token, Long.parseLong((String) reply.get(1)));
    }
    return Long.parseLong((String) reply.get(1));
  }

  /**
   * {@inheritDoc}
   *
   * @throws IllegalArgumentException also if a token is negative or above 2<sup>53</sup>, or a unit count
   *     is above 2<sup>53</sup>
   * @throws io.lettuce.core.RedisException if the command fails or times out
   */
  @Override
  public void write(String item, List<SegmentWrite> writes) {
    Objects.requireNonNull(writes, "writes");
    if (writes.isEmpty()) {
      return;
    }
    List<String> args = new ArrayList<>(1 + 3 * writes.size());
    args.add(Integer.toString(writes.size()));
    Set<Integer> seen = new HashSet<>();
    for (SegmentWrite w : writes) {
      if (!seen.add(w.segment())) {
        throw new IllegalArgumentException("segment " + w.segment() + " is written twice");
      }
      if (w.units() < 0 || w.units() > RedisFencedValue.MAX_TOKEN) {
        throw new IllegalArgumentException("units must be from 0 to 2^53, was " + w.units());
      }
      args.add(Integer.toString(w.segment()));
      args.add(checked(item, w.segment(), w.token()));
      args.add(Long.toString(w.units()));
    }
    List<Object> reply = run(WRITE_SHA, WRITE, ScriptOutputType.MULTI, key(item), args.toArray(new String[0]));
    long status = (Long) reply.get(0);
    if (status < 0) {
      throw new IllegalArgumentException("stock item '" + item + "' has no segment " + reply.get(1));
    }
    if (status == 0) {
      int segment = Integer.parseInt((String) reply.get(1));
      long token = writes.stream().filter(w -> w.segment() == segment).findFirst().orElseThrow().token();
      throw new StaleTokenException(item + "#" + segment, token, Long.parseLong((String) reply.get(2)));
    }
  }

  /**
   * {@inheritDoc}
   *
   * @throws io.lettuce.core.RedisException if the command fails or times out
   */
  @Override
  public long[] units(String item) {
    List<Object> reply = run(UNITS_SHA, UNITS, ScriptOutputType.MULTI, key(item));
    long[] out = new long[reply.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = Long.parseLong((String) reply.get(i));
    }
    return out;
  }

  @Override
  public String toString() {
    return "RedisStockStore[" + prefix + ":*]";
  }

  private static String checked(String item, int segment, long token) {
    if (token == Lease.NO_FENCING_TOKEN) {
      throw new NoFencingTokenException(item + "#" + segment, token, 0);
    }
    if (token < 0 || token > RedisFencedValue.MAX_TOKEN) {
      throw new IllegalArgumentException("a fencing token must be between 1 and 2^53 to compare exactly "
          + "in a Redis script, was " + token);
    }
    if (segment < 0) {
      throw new IllegalArgumentException("segment must not be negative, was " + segment);
    }
    return Long.toString(token);
  }

  private <T> T run(String sha, String script, ScriptOutputType type, String key, String... args) {
    String[] keys = {key};
    try {
      return redis.evalsha(sha, type, keys, args);
    } catch (RedisNoScriptException e) {
      return redis.eval(script, type, keys, args);
    } catch (RedisCommandExecutionException e) {
      if (String.valueOf(e.getMessage()).startsWith("NOSCRIPT")) {
        return redis.eval(script, type, keys, args);
      }
      throw e;
    }
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
