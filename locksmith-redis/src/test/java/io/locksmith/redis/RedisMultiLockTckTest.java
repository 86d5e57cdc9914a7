package io.locksmith.redis;

import io.locksmith.LockClient;
import io.locksmith.tck.MultiLockTck;
import io.locksmith.testkit.RedisServerExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The multi-lock contract against a real Redis server. */
class RedisMultiLockTckTest extends MultiLockTck {
  @RegisterExtension
  static final RedisServerExtension REDIS = new RedisServerExtension();

  @Override
  protected LockClient newClient() {
    return RedisLockClient.create(REDIS.server().uri());
  }
}
