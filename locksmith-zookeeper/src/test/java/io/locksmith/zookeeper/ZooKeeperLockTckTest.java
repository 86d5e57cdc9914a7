package io.locksmith.zookeeper;

import io.locksmith.LockClient;
import io.locksmith.tck.LockClientTck;
import io.locksmith.testkit.zookeeper.ZooKeeperExtension;
import io.locksmith.testkit.zookeeper.ZooKeeperTestServer;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The whole lock contract against a real ZooKeeper server (shared with the other suites of the run), over
 * ZooKeeper's default NIO client transport (most other contract suites use Netty: {@link NettyClientTransport}).
 */
class ZooKeeperLockTckTest extends LockClientTck {
  @RegisterExtension
  static final ZooKeeperExtension<ZooKeeperTestServer> ZK = ZooKeeperExtension.sharedServer();

  @Override
  protected LockClient newClient() {
    return ZooKeeperLockClient.create(ZK.get().uri());
  }

  /** Tokens are zxids: strictly increasing, but every write in the ensemble takes one. */
  @Override
  protected boolean consecutiveTokens(LockClient client) {
    return false;
  }

  /** No: holds are ephemeral nodes of the client's session: its close ends them. */
  @Override
  protected boolean keepsLocksReleasedAfterADelayPastClose() {
    return false;
  }
}
