package io.locksmith.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.redis.RedisLockClient;
import io.locksmith.testkit.RedisServerExtension;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.test.support.AbstractExtensibleLockProviderIntegrationTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

/** ShedLock's own provider contract, unmodified, on a real Redis server. */
class RedisShedLockContractTest extends AbstractExtensibleLockProviderIntegrationTest {
  @RegisterExtension
  static final RedisServerExtension REDIS = new RedisServerExtension();
  private static RedisLockClient jobs;
  private static RedisLockClient operator;
  private static LocksmithLockProvider provider;

  @BeforeAll
  static void connect() {
    jobs = RedisLockClient.create(REDIS.server().uri());
    operator = RedisLockClient.create(REDIS.server().uri());
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
