package io.locksmith.redis;

import io.locksmith.LockClient;
import io.locksmith.tck.SemaphoreTck;
import io.locksmith.testkit.RedisSentinelGroup;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The whole semaphore contract through Redis Sentinel: every client finds the master by asking the
 * sentinels ({@code redis-sentinel://} URI). One group (master, 2 replicas, 3 sentinels) for the class.
 */
class RedisSentinelSemaphoreTckTest extends SemaphoreTck {
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
