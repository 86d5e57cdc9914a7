package io.locksmith.redis;

import io.locksmith.testkit.LogCapture;
import static io.locksmith.tck.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.ClientOptions;
import io.locksmith.DistributedLock;
import io.locksmith.LockOptions;
import io.locksmith.testkit.RedisServerExtension;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 13 item 6 against Redis: a lease dropped without release, and a Lock-view hold whose thread
 * ended, were renewed for the life of the client without a word. Both are now reported at WARN (with
 * where they were acquired) and released.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class RedisLeakDetectionTest {
  @RegisterExtension
  static final RedisServerExtension REDIS = new RedisServerExtension();
  private static final LockOptions WATCHED = LockOptions.watched(Duration.ofSeconds(3));

  private static void acquireAndForget(DistributedLock lock) throws InterruptedException {
    lock.acquire(Duration.ofSeconds(5));
  }

  @Test
  void aDroppedLeaseIsReportedAndReleasedInsteadOfRenewedForever() throws Exception {
    try (LogCapture log = new LogCapture();
        // stacks recorded from the start: by default only from a client's first leak on
        RedisLockClient holder = RedisLockClient.builder().uri(REDIS.server().uri())
            .options(ClientOptions.builder().acquisitionSites(true).build()).build();
        RedisLockClient other = RedisLockClient.create(REDIS.server().uri())) {
      acquireAndForget(holder.lock("dropped", WATCHED));
      // the client looks for dropped leases every second; the collector must have run first
      boolean freed = eventually(Duration.ofSeconds(30), () -> {
        System.gc();
        return other.inspect("dropped").isEmpty();
      });
      assertThat(freed).as("released after it became unreachable (a 3 s lease, renewed until then)").isTrue();
      assertThat(log.text()).contains("a lease on lock 'dropped'")
          .contains("became unreachable without release() or close()")
          .contains("RedisLeakDetectionTest.acquireAndForget");
    }
  }

  @Test
  void aHoldWhoseThreadEndedIsReportedAndReleased() throws Exception {
    try (LogCapture log = new LogCapture();
        RedisLockClient holder = RedisLockClient.create(REDIS.server().uri());
        RedisLockClient other = RedisLockClient.create(REDIS.server().uri())) {
      DistributedLock lock = holder.lock("orphan", WATCHED);
      Thread worker = new Thread(lock::lock, "exits-holding-orphan");
      worker.start();
      worker.join();
      assertThat(other.inspect("orphan")).isPresent();
      // the next renewal (a third of the lease) finds the thread gone
      assertThat(eventually(Duration.ofSeconds(20), () -> other.inspect("orphan").isEmpty()))
          .as("the hold of the ended thread is released, not renewed forever").isTrue();
      assertThat(log.text()).contains("thread 'exits-holding-orphan' ended while holding lock 'orphan'");
      assertThat(other.lock("orphan").tryLock()).isTrue();
      other.lock("orphan").unlock();
    }
  }
}
