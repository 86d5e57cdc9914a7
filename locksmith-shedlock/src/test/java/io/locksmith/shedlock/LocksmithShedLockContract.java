package io.locksmith.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.LockClient;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.test.support.AbstractExtensibleLockProviderIntegrationTest;

/**
 * ShedLock's own provider contract, unmodified, on one backend: a subclass starts the backend's server
 * and gives the provider and a second client of the same backend, through which the contract's lock
 * checks read the backend (not the provider).
 */
abstract class LocksmithShedLockContract extends AbstractExtensibleLockProviderIntegrationTest {
  /** @return the provider under test */
  abstract LocksmithLockProvider provider();

  /** @return another client of the same backend, for reading who holds a lock */
  abstract LockClient operator();

  @Override
  protected final ExtensibleLockProvider getLockProvider() {
    return provider();
  }

  @Override
  protected final void assertUnlocked(String lockName) {
    assertThat(operator().inspect(lockName)).as("'%s' free", lockName).isEmpty();
  }

  @Override
  protected final void assertLocked(String lockName) {
    assertThat(operator().inspect(lockName)).as("'%s' held", lockName).isPresent();
  }
}
