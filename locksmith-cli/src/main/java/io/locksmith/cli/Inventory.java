package io.locksmith.cli;

import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.sync.RedisCommands;
import io.locksmith.StaleTokenException;
import io.locksmith.redis.RedisFencedValue;
import java.util.OptionalInt;

/**
 * The demo's shared resource: a stock count in Redis, kept apart from the lock. Plain reads and writes
 * model a resource that trusts whoever holds the lock. The fenced access models one that checks the
 * fencing token through {@link RedisFencedValue}: the token is admitted at the read (the first access
 * under the lock) and checked again at the write, and a token smaller than the largest admitted is
 * refused and counted.
 */
final class Inventory {
  static final String STOCK = "demo:inventory:stock";
  static final String FENCE = "demo:inventory:fence";
  static final String SOLD = "demo:inventory:sold";
  static final String STALE = "demo:inventory:stale-rejected";
  static final String STALE_READS = "demo:inventory:stale-reads-rejected";

  /**
   * The recipe Locksmith published before issue 12: the token checked at the write only, after a plain
   * read. Kept for the demo's last phase, which shows the update it loses. Returns 1 written, 0 stale.
   */
  private static final String WRITE_ONLY_FENCE = String.join("\n",
      "local last = tonumber(redis.call('GET', KEYS[2]) or '0')",
      "if tonumber(ARGV[1]) < last then",
      "  redis.call('INCR', KEYS[3])",
      "  return 0",
      "end",
      "redis.call('SET', KEYS[1], ARGV[2])",
      "redis.call('SET', KEYS[2], ARGV[1])",
      "return 1");

  private final RedisCommands<String, String> redis;
  private final RedisFencedValue fenced;

  Inventory(RedisCommands<String, String> redis) {
    this.redis = redis;
    this.fenced = RedisFencedValue.of(redis, STOCK, FENCE);
  }

  void reset(int stock) {
    redis.del(STOCK, FENCE, SOLD, STALE, STALE_READS);
    redis.set(STOCK, Integer.toString(stock));
  }

  /** A plain read: trusts the caller. */
  int stock() {
    String v = redis.get(STOCK);
    return v == null ? 0 : Integer.parseInt(v);
  }

  void write(int stock) {
    redis.set(STOCK, Integer.toString(stock));
  }

  /**
   * The first access under the lock: admits {@code token} and reads the stock in one script.
   *
   * @return the stock, or empty if the token was refused as stale (a later holder has been admitted)
   */
  OptionalInt fencedRead(long token) {
    try {
      return OptionalInt.of(fenced.read(token).map(Integer::parseInt).orElse(0));
    } catch (StaleTokenException e) {
      redis.incr(STALE_READS);
      return OptionalInt.empty();
    }
  }

  /** @return whether the write was accepted (no larger token admitted since this holder's read) */
  boolean fencedWrite(long token, int stock) {
    try {
      fenced.write(token, Integer.toString(stock));
      return true;
    } catch (StaleTokenException e) {
      redis.incr(STALE);
      return false;
    }
  }

  /** The old write-only fence, for the demo's comparison; never use it for real data. */
  boolean writeOnlyFencedWrite(long token, int stock) {
    Long ok = redis.eval(WRITE_ONLY_FENCE, ScriptOutputType.INTEGER, new String[] {STOCK, FENCE, STALE},
        Long.toString(token), Integer.toString(stock));
    return ok == 1L;
  }

  void recordSale() {
    redis.incr(SOLD);
  }

  long sold() {
    return count(SOLD);
  }

  long staleRejected() {
    return count(STALE);
  }

  long staleReadsRejected() {
    return count(STALE_READS);
  }

  private long count(String key) {
    String v = redis.get(key);
    return v == null ? 0 : Long.parseLong(v);
  }
}
