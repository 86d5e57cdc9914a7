package io.locksmith.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.LockClient;
import io.locksmith.injvm.InJvmLockServer;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.test.support.AbstractExtensibleLockProviderIntegrationTest;
import org.junit.jupiter.api.AfterAll;

/** ShedLock's own provider contract, unmodified, on the in-JVM lock server. */
class InJvmShedLockContractTest extends AbstractExtensibleLockProviderIntegrationTest {
  private static final InJvmLockServer SERVER = new InJvmLockServer();
  private static final LockClient JOBS = SERVER.newClient();
  private static final LockClient OPERATOR = SERVER.newClient();
  private static final LocksmithLockProvider PROVIDER = new LocksmithLockProvider(JOBS);

  @AfterAll
  static void close() {
    PROVIDER.close();
    JOBS.close();
    OPERATOR.close();
  }

  @Override
  protected ExtensibleLockProvider getLockProvider() {
    return PROVIDER;
  }

  @Override
  protected void assertUnlocked(String lockName) {
    assertThat(OPERATOR.inspect(lockName)).as("'%s' free", lockName).isEmpty();
  }

  @Override
  protected void assertLocked(String lockName) {
    assertThat(OPERATOR.inspect(lockName)).as("'%s' held", lockName).isPresent();
  }
}
