package io.locksmith.zookeeper;

import io.locksmith.LockClient;
import io.locksmith.tck.SemaphoreTck;
import io.locksmith.testkit.zookeeper.ZooKeeperEnsemble;
import io.locksmith.testkit.zookeeper.ZooKeeperExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The whole semaphore contract against a 3-member ensemble (shared with the other ensemble suites of the run). */
class ZooKeeperEnsembleSemaphoreTckTest extends SemaphoreTck {
  /** Its clients close without NIO's fixed 100 ms pause (see {@link NettyClientTransport}). */
  @RegisterExtension
  static final NettyClientTransport TRANSPORT = new NettyClientTransport();

  @RegisterExtension
  static final ZooKeeperExtension<ZooKeeperEnsemble> ZK = ZooKeeperExtension.sharedEnsemble();

  @Override
  protected LockClient newClient() {
    return ZooKeeperLockClient.create(ZK.get().uri());
  }
}
