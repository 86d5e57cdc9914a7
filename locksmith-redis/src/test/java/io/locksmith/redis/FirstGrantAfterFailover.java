package io.locksmith.redis;

import static io.locksmith.tck.Eventually.eventually;

import io.locksmith.BackendUnavailableException;
import io.locksmith.Lease;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * What a client sees while the sentinels fail a master over: it tries a lock until one is granted, with a
 * new name per attempt (a timed-out attempt that was applied must not block the next one).
 *
 * @param lease the first grant, or null if none came in time
 * @param attempts how many names were tried
 * @param millis from {@code since} to the grant (or to giving up)
 */
record FirstGrantAfterFailover(Lease lease, int attempts, long millis) {
  /**
   * @param client the client to try with
   * @param prefix the lock names' prefix; attempt n uses {@code prefix + n}
   * @param within how long to keep trying
   * @param since {@link System#nanoTime()} when the fault began
   */
  static FirstGrantAfterFailover await(RedisLockClient client, String prefix, Duration within, long since)
      throws InterruptedException {
    AtomicInteger attempts = new AtomicInteger();
    AtomicReference<Lease> first = new AtomicReference<>();
    eventually(within, () -> {
      try {
        Optional<Lease> lease = client.lock(prefix + attempts.incrementAndGet()).tryAcquire();
        lease.ifPresent(first::set);
        return lease.isPresent();
      } catch (BackendUnavailableException e) {
        return false;
      }
    });
    return new FirstGrantAfterFailover(first.get(), attempts.get(),
        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since));
  }

  boolean acquired() {
    return lease != null;
  }
}
