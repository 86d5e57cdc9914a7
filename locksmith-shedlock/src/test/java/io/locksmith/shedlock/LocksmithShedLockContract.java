package io.locksmith.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.LockClient;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.test.support.AbstractExtensibleLockProviderIntegrationTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceAccessMode;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.junit.jupiter.api.parallel.ResourceLockTarget;

/**
 * ShedLock's own provider contract, unmodified, on one backend: a subclass starts the backend's server
 * and gives the provider and a second client of the same backend, through which the contract's lock
 * checks read the backend (not the provider).
 *
 * <p>The contract's cases run side by side (junit-platform.properties): four of them sleep out lock
 * durations fixed at 2 s in ShedLock's code, and each case locks names of its own, so one at a time would
 * only add those sleeps up. The provider is shared, as one application's provider is by its jobs.
 */
@ResourceLock(value = LocksmithShedLockContract.SHORT_LEASES, mode = ResourceAccessMode.READ,
    target = ResourceLockTarget.CHILDREN)
abstract class LocksmithShedLockContract extends AbstractExtensibleLockProviderIntegrationTest {
  /**
   * Taken alone by the cases that lock for 50 ms or less, shared by the others: those cases sleep a few
   * milliseconds past such a {@code lockAtMostFor} and expect the provider's timer to have released it, so
   * they run with no other case of the class beside them to delay that timer; they are ShedLock's, only
   * delegated to here so as to carry the lock.
   */
  static final String SHORT_LEASES = "shedlock-short-leases";

  private static final Set<Class<?>> WARMED_UP = ConcurrentHashMap.newKeySet();

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

  /**
   * One lock and one read before the first case of the class, the others waiting: the first request on a
   * fresh connection (script loading, a first statement) is slow, and a short-lease case that happened to
   * be first would see its grant come too late (see {@link #SHORT_LEASES}).
   */
  @BeforeEach
  final void warmUpOnce() {
    synchronized (WARMED_UP) {
      if (WARMED_UP.add(getClass())) {
        provider().lock(new LockConfiguration(ClockProvider.now(), "warm-up", Duration.ofSeconds(10), Duration.ZERO))
            .ifPresent(SimpleLock::unlock);
        operator().inspect("warm-up");
      }
    }
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
}
