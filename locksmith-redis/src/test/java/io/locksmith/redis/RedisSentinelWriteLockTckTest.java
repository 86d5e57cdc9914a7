package io.locksmith.redis;

import io.locksmith.LockClient;
import io.locksmith.tck.WriteLockTck;
import io.locksmith.testkit.RedisSentinelGroup;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The read-write lock contract through Redis Sentinel ({@code redis-sentinel://} URI). One group
 * (master, 2 replicas, 3 sentinels) for the class.
 */
class RedisSentinelWriteLockTckTest extends WriteLockTck {
  private static RedisSentinelGroup group;

  @BeforeAll
  static void startGroup() {
    group = RedisSentinelGroup.start();
  }

  @AfterAll
  static void stopGroup() {
    if (group != null) {
      group.close();
    }
  }

  @Override
  protected LockClient newClient() {
    return RedisLockClient.create(group.sentinelUri());
  }
}
