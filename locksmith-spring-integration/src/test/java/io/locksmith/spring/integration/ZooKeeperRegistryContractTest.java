package io.locksmith.spring.integration;

import io.locksmith.testkit.zookeeper.ZooKeeperExtension;
import io.locksmith.testkit.zookeeper.ZooKeeperTestServer;
import io.locksmith.zookeeper.ZooKeeperLockClient;
import java.time.Duration;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/** The LockRegistry contract on Locksmith's ZooKeeper backend (a real server): one client per registry. */
class ZooKeeperRegistryContractTest extends LockRegistryContract {
  @RegisterExtension
  static final ZooKeeperExtension<ZooKeeperTestServer> ZK = ZooKeeperExtension.server();

  @Override
  RenewableLockRegistry newRegistry(Duration ttl) {
    ZooKeeperLockClient client = closeAfter(ZooKeeperLockClient.create(ZK.get().uri()));
    return ttl == null ? new LocksmithLockRegistry(client)
        : LocksmithLockRegistry.builder(client).fixedLease(ttl).build();
  }
}
