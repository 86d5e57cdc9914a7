package io.locksmith.redis;

import io.locksmith.LockClient;
import io.locksmith.tck.LockClientTck;
import io.locksmith.testkit.RedisServerExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The whole lock contract against a real Redis server. */
class RedisLockTckTest extends LockClientTck {
  @RegisterExtension
  static final RedisServerExtension REDIS = new RedisServerExtension();

  @Override
  protected LockClient newClient() {
    return RedisLockClient.create(REDIS.server().uri());
  }
}
