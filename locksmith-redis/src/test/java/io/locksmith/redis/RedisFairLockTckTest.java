package io.locksmith.redis;

import io.locksmith.LockClient;
import io.locksmith.tck.FairLockTck;
import io.locksmith.testkit.RedisServerExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The whole lock contract, and the fair lock's own, on the fair lock of a real Redis server. */
class RedisFairLockTckTest extends FairLockTck {
  @RegisterExtension
  static final RedisServerExtension REDIS = new RedisServerExtension();

  @Override
  protected LockClient newClient() {
    return RedisLockClient.create(REDIS.server().uri());
  }
}
