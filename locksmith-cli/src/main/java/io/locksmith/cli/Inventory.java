package io.locksmith.cli;

import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.sync.RedisCommands;

/**
 * The demo's shared resource: a stock count in Redis, kept apart from the lock. Plain writes model a
 * resource that trusts whoever holds the lock; the fenced write models one that checks the fencing
 * token and refuses a token smaller than the largest it has accepted.
 */
final class Inventory {
  static final String STOCK = "demo:inventory:stock";
  static final String FENCE = "demo:inventory:fence";
  static final String SOLD = "demo:inventory:sold";
  static final String STALE = "demo:inventory:stale-rejected";

  /**
   * Compare-and-set on the token: equal tokens pass (the same holder writing twice), smaller ones are
   * rejected and counted. Returns 1 when written, 0 when rejected as stale.
   */
  private static final String FENCED_WRITE = String.join("\n",
      "local last = tonumber(redis.call('GET', KEYS[2]) or '0')",
      "if tonumber(ARGV[1]) < last then",
      "  redis.call('INCR', KEYS[3])",
      "  return 0",
      "end",
      "redis.call('SET', KEYS[1], ARGV[2])",
      "redis.call('SET', KEYS[2], ARGV[1])",
      "return 1");

  private final RedisCommands<String, String> redis;

  Inventory(RedisCommands<String, String> redis) {
    this.redis = redis;
  }

  void reset(int stock) {
    redis.del(STOCK, FENCE, SOLD, STALE);
    redis.set(STOCK, Integer.toString(stock));
  }

  int stock() {
    String v = redis.get(STOCK);
    return v == null ? 0 : Integer.parseInt(v);
  }

  void write(int stock) {
    redis.set(STOCK, Integer.toString(stock));
  }

  /** @return whether the write was accepted (token not older than the last accepted one) */
  boolean fencedWrite(long token, int stock) {
    Long ok = redis.eval(FENCED_WRITE, ScriptOutputType.INTEGER, new String[] {STOCK, FENCE, STALE},
        Long.toString(token), Integer.toString(stock));
    return ok == 1L;
  }

  void recordSale() {
    redis.incr(SOLD);
  }

  long sold() {
    String v = redis.get(SOLD);
    return v == null ? 0 : Long.parseLong(v);
  }

  long staleRejected() {
    String v = redis.get(STALE);
    return v == null ? 0 : Long.parseLong(v);
  }
}
