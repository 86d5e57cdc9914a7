package io.locksmith.redis;

import io.locksmith.LockClient;
import io.locksmith.tck.WriteLockTck;
import io.locksmith.testkit.RedisServerExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The whole lock contract on the write side of a Redis read-write lock, plus the read-write cases. */
class RedisWriteLockTckTest extends WriteLockTck {
  @RegisterExtension
  static final RedisServerExtension REDIS = new RedisServerExtension();

  @Override
  protected LockClient newClient() {
    return RedisLockClient.create(REDIS.server().uri());
  }
}
