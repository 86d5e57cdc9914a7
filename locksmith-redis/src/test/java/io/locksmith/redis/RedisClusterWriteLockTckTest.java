package io.locksmith.redis;

import io.locksmith.LockClient;
import io.locksmith.tck.WriteLockTck;
import io.locksmith.testkit.RedisCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The read-write lock contract (the write side, plus the read-write cases) on a Redis Cluster (3 masters,
 * 3 replicas), clients seeded from one node.
 */
class RedisClusterWriteLockTckTest extends WriteLockTck {
  private static RedisCluster cluster;

  @BeforeAll
  static void startCluster() {
    cluster = RedisCluster.start();
  }

  @AfterAll
  static void stopCluster() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Override
  protected LockClient newClient() {
    return RedisLockClient.create(cluster.seedUri().replace("redis://", "redis-cluster://"));
  }
}
