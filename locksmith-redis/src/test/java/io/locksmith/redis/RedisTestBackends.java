package io.locksmith.redis;

import io.lettuce.core.RedisURI;
import io.locksmith.spi.LockBackend;
import java.time.Duration;

/**
 * Redis backends for tests in other packages that drive the core client directly (its package-private test
 * hooks live in {@code io.locksmith.internal}). Not thread-safe to share: each call makes a new, unopened
 * backend, which the core client that gets it opens and closes.
 */
public final class RedisTestBackends {
  private RedisTestBackends() {}

  /**
   * @param uri a plain {@code redis://host:port} URI
   * @return an unopened backend with a 2 s command timeout and the builder's other defaults
   */
  public static LockBackend backend(String uri) {
    return new RedisBackend(RedisURI.create(uri), Duration.ofSeconds(2), RedisLockClient.DEFAULT_WAITER_RECHECK,
        RedisLockClient.DEFAULT_FENCE_RETENTION);
  }
}
