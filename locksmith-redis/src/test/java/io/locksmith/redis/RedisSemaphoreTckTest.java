package io.locksmith.redis;

import io.locksmith.LockClient;
import io.locksmith.tck.SemaphoreTck;
import io.locksmith.testkit.RedisServerExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The whole semaphore contract against a real Redis server. */
class RedisSemaphoreTckTest extends SemaphoreTck {
  @RegisterExtension
  static final RedisServerExtension REDIS = new RedisServerExtension();

  @Override
  protected LockClient newClient() {
    return RedisLockClient.create(REDIS.server().uri());
  }
}
