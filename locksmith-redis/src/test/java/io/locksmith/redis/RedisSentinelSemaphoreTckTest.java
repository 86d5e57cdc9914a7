package io.locksmith.redis;

import io.locksmith.LockClient;
import io.locksmith.tck.SemaphoreTck;
import io.locksmith.testkit.RedisSentinelGroup;
import io.locksmith.testkit.SharedTopology;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The semaphore's contract through Redis Sentinel: every client finds the master by asking the
 * sentinels. The group is shared with the other Sentinel contract suites of the run.
 */
class RedisSentinelSemaphoreTckTest extends SemaphoreTck {
  @RegisterExtension
  static final SharedTopology<RedisSentinelGroup> SENTINELS = SharedTopology.sentinelGroup();

  @Override
  protected LockClient newClient() {
    return RedisLockClient.create(SENTINELS.get().sentinelUri());
  }
}
