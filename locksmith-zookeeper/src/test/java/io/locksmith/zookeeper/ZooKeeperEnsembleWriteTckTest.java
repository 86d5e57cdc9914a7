package io.locksmith.zookeeper;

import io.locksmith.LockClient;
import io.locksmith.tck.WriteLockTck;
import io.locksmith.testkit.zookeeper.ZooKeeperEnsemble;
import io.locksmith.testkit.zookeeper.ZooKeeperExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The whole read-write lock (write side, and the read-write cases) contract against a 3-member ensemble (shared with the other ensemble suites of the run). */
class ZooKeeperEnsembleWriteTckTest extends WriteLockTck {
  /** Its clients close without NIO's fixed 100 ms pause (see {@link NettyClientTransport}). */
  @RegisterExtension
  static final NettyClientTransport TRANSPORT = new NettyClientTransport();

  @RegisterExtension
  static final ZooKeeperExtension<ZooKeeperEnsemble> ZK = ZooKeeperExtension.sharedEnsemble();

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
