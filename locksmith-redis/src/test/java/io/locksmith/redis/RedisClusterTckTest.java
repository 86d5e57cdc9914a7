package io.locksmith.redis;

import io.locksmith.LockClient;
import io.locksmith.tck.LockClientTck;
import io.locksmith.testkit.RedisCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The whole lock contract on a Redis Cluster (3 masters, 3 replicas): every client learns the slot map
 * from one seed node ({@code redis-cluster://} URI), and the TCK's lock names spread over the masters.
 */
class RedisClusterTckTest extends LockClientTck {
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
