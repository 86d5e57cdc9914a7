package io.locksmith.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.BackendUnavailableException;
import io.locksmith.DistributedLock;
import io.locksmith.LockClient;
import io.locksmith.LockOptions;
import io.locksmith.injvm.InJvmLockServer;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The Lock view's hold count follows the thread's own {@code lock()}/{@code unlock()} calls, whatever the
 * server counted, and as many unlocks as locks free the lock (issue 12, item 2). The Redis and Redlock
 * variants, with replies lost or late on a real network, are in {@code RedisHoldCountTest} and
 * {@code RedlockHoldCountTest}.
 */
@Timeout(30)
class LockViewHoldCountTest {
  private static final LockOptions LONG = LockOptions.watched(Duration.ofSeconds(30));

  /**
   * Regression: a partial unlock that failed (never applied) dropped a local hold, and the next re-entry
   * adopted the server's higher count: {@code getHoldCount()} went from 1 to 3 on one {@code lock()}, and
   * the matching unlocks left the lock held (and renewed) for the life of the client.
   */
  @Test
  void aFailedPartialUnlockDoesNotInflateTheCountAndMatchingUnlocksFreeTheLock() {
    InJvmLockServer server = new InJvmLockServer();
    try (LockClient client = server.newClient(); LockClient other = server.newClient()) {
      DistributedLock lock = client.lock("drift", LONG);
      lock.lock();
      lock.lock();
      server.setReachable(false);
      assertThatThrownBy(lock::unlock).isInstanceOf(BackendUnavailableException.class);
      assertThat(lock.getHoldCount()).as("the failed unlock still gives up this thread's hold").isEqualTo(1);
      server.setReachable(true);

      lock.lock();
      assertThat(lock.getHoldCount()).as("one lock() after lock, lock, unlock").isEqualTo(2);
      assertThat(lock.currentThreadLease().orElseThrow().holdCount()).isEqualTo(2);
      lock.unlock();
      assertThat(lock.getHoldCount()).isEqualTo(1);
      assertThat(other.lock("drift").tryAcquire()).as("still held after an inner unlock").isEmpty();
      lock.unlock();

      assertThat(lock.isHeldByCurrentThread()).isFalse();
      assertThat(lock.getHoldCount()).isZero();
      assertThat(lock.inspect()).as("three lock() and three unlock() leave nothing on the server").isEmpty();
      assertThat(other.lock("drift").tryAcquire()).as("free for another client").isPresent();
    }
  }

  /** Several failed unlocks in a row: each still counts, and the last local hold releases everything. */
  @Test
  void everyUnlockCountsEvenWhenSeveralFail() {
    InJvmLockServer server = new InJvmLockServer();
    try (LockClient client = server.newClient(); LockClient other = server.newClient()) {
      DistributedLock lock = client.lock("drift-many", LONG);
      for (int i = 0; i < 4; i++) {
        lock.lock();
      }
      server.setReachable(false);
      assertThatThrownBy(lock::unlock).isInstanceOf(BackendUnavailableException.class);
      assertThatThrownBy(lock::unlock).isInstanceOf(BackendUnavailableException.class);
      server.setReachable(true);
      assertThat(lock.getHoldCount()).isEqualTo(2);
      assertThat(lock.inspect().orElseThrow().holdCount()).as("the server still counts the unlocks it missed")
          .isEqualTo(4);

      lock.lock();
      assertThat(lock.getHoldCount()).as("four lock(), two unlock(), one lock()").isEqualTo(3);
      lock.unlock();
      lock.unlock();
      assertThat(lock.getHoldCount()).isEqualTo(1);
      assertThat(lock.isHeldByCurrentThread()).isTrue();
      lock.unlock();
      assertThat(lock.isHeldByCurrentThread()).isFalse();
      assertThat(other.lock("drift-many").tryAcquire()).as("five lock() and five unlock() free it").isPresent();
    }
  }
}
