package io.locksmith.spring.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/**
 * The cases of Spring Integration 7's own lock API ({@code DistributedLock.lock(ttl)}, {@code tryLock(wait,
 * ttl)}, {@code RenewableLockRegistry.renewLock(key, ttl)}), added to the shared {@link LockRegistryContract}
 * by the SI 7 subclasses of its Locksmith and Spring runs. The two registries of a case are two owners.
 * The cases are about a lease running out, so they sleep for the time under test, and only then.
 */
interface DistributedLockCases {
  /** The ttl the cases lock with: long enough to see "still held" on a loaded machine, short to wait out. */
  Duration TTL = Duration.ofMillis(1500);
  /** A wait that reaching means something hangs (the contract's LONG_WAIT_SECONDS). */
  long LONG_WAIT_SECONDS = 10;

  /** @return a new registry whose default ttl outlasts any case, an owner of its own, closed after the case */
  RenewableLockRegistry<DistributedLock> registry7();

  /** @return what {@code renewLock(key, ttl)} throws when the calling thread does not hold the lock */
  default Class<? extends RuntimeException> renewWithTtlNotHeldException() {
    return IllegalStateException.class;
  }

  private static String newKey() {
    return "si7-" + UUID.randomUUID();
  }

  /** Unlocks a lock whose ttl ran out: implementations differ in whether that throws, which is not tested here. */
  private static void unlockQuietly(DistributedLock lock) {
    try {
      lock.unlock();
    } catch (RuntimeException expiredOrNotHeld) {
      // the hold is dropped either way
    }
  }

  @Test
  default void lockWithATtlHoldsUntilItEnds() throws Exception {
    RenewableLockRegistry<DistributedLock> one = registry7();
    RenewableLockRegistry<DistributedLock> two = registry7();
    String key = newKey();
    DistributedLock held = one.obtain(key);
    long start = System.nanoTime();
    held.lock(TTL);
    try {
      boolean takenEarly = two.obtain(key).tryLock();
      long checkedAt = System.nanoTime() - start;
      // only meaningful while the ttl had not run out at the check (a stalled machine may take longer)
      if (checkedAt < TTL.toNanos()) {
        assertThat(takenEarly).as("the lock is held within its ttl").isFalse();
      }
      DistributedLock contender = two.obtain(key);
      assertThat(contender.tryLock(LONG_WAIT_SECONDS, TimeUnit.SECONDS)).as("free once the ttl ran out").isTrue();
      assertThat(System.nanoTime() - start).as("not before the ttl").isGreaterThanOrEqualTo(TTL.toNanos() - 50_000_000L);
      contender.unlock();
    } finally {
      unlockQuietly(held);
    }
  }

  @Test
  default void tryLockWithAWaitAndATtl() throws Exception {
    RenewableLockRegistry<DistributedLock> one = registry7();
    RenewableLockRegistry<DistributedLock> two = registry7();
    String key = newKey();
    DistributedLock first = one.obtain(key);
    first.lock();
    DistributedLock second = two.obtain(key);
    assertThat(second.tryLock(Duration.ofMillis(200), TTL)).as("held by the other registry").isFalse();
    first.unlock();
    assertThat(second.tryLock(Duration.ofSeconds(LONG_WAIT_SECONDS), TTL)).isTrue();
    long start = System.nanoTime();
    try {
      assertThat(first.tryLock(LONG_WAIT_SECONDS, TimeUnit.SECONDS)).as("free once the ttl ran out").isTrue();
      // the grant came at the earliest when the ttl taken at 'start' (or just before) ran out
      assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(TTL.toNanos() - 200_000_000L);
      first.unlock();
    } finally {
      unlockQuietly(second);
    }
  }

  @Test
  default void renewLockWithATtlKeepsTheLockPastItsFirstTtl() throws Exception {
    RenewableLockRegistry<DistributedLock> one = registry7();
    RenewableLockRegistry<DistributedLock> two = registry7();
    String key = newKey();
    DistributedLock held = one.obtain(key);
    long start = System.nanoTime();
    held.lock(TTL);
    try {
      Thread.sleep(TTL.toMillis() / 2); // the time under test: half the ttl gone
      long renewedAt = System.nanoTime();
      one.renewLock(key, TTL);
      // past the first ttl, well within the renewed one (which ends TTL after renewedAt)
      long checkAt = start + TTL.toNanos() + 100_000_000L;
      long wait = checkAt - System.nanoTime();
      if (wait > 0) {
        TimeUnit.NANOSECONDS.sleep(wait);
      }
      boolean taken = two.obtain(key).tryLock();
      if (System.nanoTime() - renewedAt < TTL.toNanos()) {
        assertThat(taken).as("renewed past its first ttl").isFalse();
      }
      held.unlock();
    } finally {
      unlockQuietly(held);
    }
  }

  @Test
  default void renewLockWithATtlOfALockNobodyHoldsThrows() {
    RenewableLockRegistry<DistributedLock> one = registry7();
    assertThatThrownBy(() -> one.renewLock(newKey(), TTL)).isInstanceOf(renewWithTtlNotHeldException());
  }
}
