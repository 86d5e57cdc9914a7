package io.locksmith.redis;

import io.locksmith.LockClient;
import io.locksmith.tck.SemaphoreTck;
import io.locksmith.testkit.RedisCluster;
import io.locksmith.testkit.SharedTopology;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The semaphore's contract on a Redis Cluster (3 masters, 3 replicas), clients seeded from one node. The cluster is shared with the other Cluster contract suites of the run.
 */
class RedisClusterSemaphoreTckTest extends SemaphoreTck {
  @RegisterExtension
  static final SharedTopology<RedisCluster> CLUSTER = SharedTopology.cluster();

  @Override
  protected LockClient newClient() {
    return RedisLockClient.create(CLUSTER.get().seedUri().replace("redis://", "redis-cluster://"));
  }
}
