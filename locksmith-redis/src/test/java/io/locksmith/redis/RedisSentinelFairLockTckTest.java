package io.locksmith.redis;

import io.locksmith.LockClient;
import io.locksmith.tck.FairLockTck;
import io.locksmith.testkit.RedisSentinelGroup;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The fair lock's contract through Redis Sentinel: every client finds the master by asking the
 * sentinels. One group (master, 2 replicas, 3 sentinels) for the class.
 */
class RedisSentinelFairLockTckTest extends FairLockTck {
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
