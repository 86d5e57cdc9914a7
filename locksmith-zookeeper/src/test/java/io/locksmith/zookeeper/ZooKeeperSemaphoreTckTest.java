package io.locksmith.zookeeper;

import io.locksmith.LockClient;
import io.locksmith.tck.SemaphoreTck;
import io.locksmith.testkit.zookeeper.ZooKeeperTestServer;
import io.locksmith.testkit.zookeeper.ZooKeeperExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The whole semaphore contract against a real ZooKeeper server (shared with the other suites of the run). */
class ZooKeeperSemaphoreTckTest extends SemaphoreTck {
  /** Its clients close without NIO's fixed 100 ms pause (see {@link NettyClientTransport}). */
  @RegisterExtension
  static final NettyClientTransport TRANSPORT = new NettyClientTransport();

  @RegisterExtension
  static final ZooKeeperExtension<ZooKeeperTestServer> ZK = ZooKeeperExtension.sharedServer();

  @Override
  protected LockClient newClient() {
    return ZooKeeperLockClient.create(ZK.get().uri());
  }
}
