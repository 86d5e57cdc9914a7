package io.locksmith.shedlock;

import io.locksmith.LockClient;
import io.locksmith.testkit.zookeeper.ZooKeeperExtension;
import io.locksmith.testkit.zookeeper.ZooKeeperTestServer;
import io.locksmith.zookeeper.ZooKeeperLockClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

/** ShedLock's own provider contract, unmodified, on a real ZooKeeper server. */
class ZooKeeperShedLockContractTest extends LocksmithShedLockContract {
  @RegisterExtension
  static final ZooKeeperExtension<ZooKeeperTestServer> ZK = ZooKeeperExtension.server();
  private static ZooKeeperLockClient jobs;
  private static ZooKeeperLockClient operator;
  private static LocksmithLockProvider provider;

  @BeforeAll
  static void connect() {
    jobs = ZooKeeperLockClient.create(ZK.get().uri());
    operator = ZooKeeperLockClient.create(ZK.get().uri());
    provider = new LocksmithLockProvider(jobs);
  }

  @AfterAll
  static void close() {
    provider.close();
    jobs.close();
    operator.close();
  }

  @Override
  LocksmithLockProvider provider() {
    return provider;
  }

  @Override
  LockClient operator() {
    return operator;
  }
}
