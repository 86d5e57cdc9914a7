package io.locksmith.redis;

import io.locksmith.LockClient;
import io.locksmith.tck.LockClientTck;
import io.locksmith.testkit.RedisSentinelGroup;
import io.locksmith.testkit.SharedTopology;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The whole lock contract through Redis Sentinel (master, 2 replicas, 3 sentinels): every client finds
 * the master by asking the sentinels. The group is shared with the other Sentinel contract suites of the run.
 */
class RedisSentinelTckTest extends LockClientTck {
  @RegisterExtension
  static final SharedTopology<RedisSentinelGroup> SENTINELS = SharedTopology.sentinelGroup();

  @Override
  protected LockClient newClient() {
    return RedisLockClient.create(SENTINELS.get().sentinelUri());
  }
}
