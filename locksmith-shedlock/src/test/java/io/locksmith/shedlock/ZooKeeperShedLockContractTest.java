package io.locksmith.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.testkit.zookeeper.ZooKeeperExtension;
import io.locksmith.testkit.zookeeper.ZooKeeperTestServer;
import io.locksmith.zookeeper.ZooKeeperLockClient;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.test.support.AbstractExtensibleLockProviderIntegrationTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

/** ShedLock's own provider contract, unmodified, on a real ZooKeeper server. */
class ZooKeeperShedLockContractTest extends AbstractExtensibleLockProviderIntegrationTest {
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
  protected ExtensibleLockProvider getLockProvider() {
    return provider;
  }

  @Override
  protected void assertUnlocked(String lockName) {
    assertThat(operator.inspect(lockName)).as("'%s' free", lockName).isEmpty();
  }

  @Override
  protected void assertLocked(String lockName) {
    assertThat(operator.inspect(lockName)).as("'%s' held", lockName).isPresent();
  }
}
