package io.locksmith.redis;

import io.locksmith.LockClient;
import io.locksmith.tck.LockClientTck;
import io.locksmith.testkit.RedisCluster;
import io.locksmith.testkit.SharedTopology;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The whole lock contract on a Redis Cluster (3 masters, 3 replicas): every client learns the slot map
 * from one seed node ({@code redis-cluster://} URI), and the TCK's lock names spread over the masters. The cluster is shared with the other Cluster contract suites of the run.
 */
class RedisClusterTckTest extends LockClientTck {
  @RegisterExtension
  static final SharedTopology<RedisCluster> CLUSTER = SharedTopology.cluster();

  @Override
  protected LockClient newClient() {
    return RedisLockClient.create(CLUSTER.get().seedUri().replace("redis://", "redis-cluster://"));
  }
}
