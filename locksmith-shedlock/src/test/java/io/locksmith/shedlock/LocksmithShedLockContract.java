package io.locksmith.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.LockClient;
import java.util.concurrent.ExecutionException;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.test.support.AbstractExtensibleLockProviderIntegrationTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * ShedLock's own provider contract, unmodified, on one backend: a subclass starts the backend's server
 * and gives the provider and a second client of the same backend, through which the contract's lock
 * checks read the backend (not the provider).
 *
 * <p>The contract's cases run side by side (junit-platform.properties): four of them sleep out lock
 * durations fixed at 2 s in ShedLock's code, and each case locks names of its own, so one at a time would
 * only add those sleeps up. The provider is shared, as one application's provider is by its jobs.
 */
abstract class LocksmithShedLockContract extends AbstractExtensibleLockProviderIntegrationTest {
  /**
   * Held by the cases that lock for 50 ms or less: the provider asks the backend for its 100 ms floor,
   * whose grant must arrive within about 48 ms (100 ms less the client's drift and scheduling allowance)
   * or it is given back as too late. Those cases therefore never run beside the fuzz case and its 8
   * threads; they are ShedLock's, only delegated to here so as to carry the lock.
   */
  private static final String SHORT_LEASES = "shedlock-short-leases";

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

  @Test
  @ResourceLock(SHORT_LEASES)
  @Override
  public void shouldTimeout() throws InterruptedException {
    super.shouldTimeout();
  }

  @Test
  @ResourceLock(SHORT_LEASES)
  @Override
  public void shouldNotBeAbleToExtendExpiredLock() {
    super.shouldNotBeAbleToExtendExpiredLock();
  }

  @Test
  @ResourceLock(SHORT_LEASES)
  @Override
  public void fuzzTestShouldPass() throws ExecutionException, InterruptedException {
    super.fuzzTestShouldPass();
  }
}
