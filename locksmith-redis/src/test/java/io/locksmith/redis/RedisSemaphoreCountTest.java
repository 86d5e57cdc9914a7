package io.locksmith.redis;

import io.locksmith.testkit.LogCapture;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.AcquireTimeoutException;
import io.locksmith.DistributedSemaphore;
import io.locksmith.Lease;
import io.locksmith.LockKind;
import io.locksmith.testkit.RedisServerExtension;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 13 item 6: {@code semaphore("exports", 4)} on a semaphore Redis had stored with 2 permits gave 2
 * permits without a word, and its timeout said "lock 'exports' was not acquired". The acquire script now
 * reports the count in force with every reply; the client warns once per semaphore object and its
 * timeouts give the counts.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisSemaphoreCountTest {
  @RegisterExtension
  static final RedisServerExtension REDIS = new RedisServerExtension();
  private static final String MISMATCH = "semaphore 'exports' was declared with 4 permits, but 2 are in force";

  @Test
  void aDeclaredCountThatIsNotInForceIsWarnedOnceAndNamedInTheTimeout() throws Exception {
    try (LogCapture log = new LogCapture();
        RedisLockClient first = RedisLockClient.create(REDIS.server().uri());
        RedisLockClient second = RedisLockClient.create(REDIS.server().uri())) {
      DistributedSemaphore two = first.semaphore("exports", 2);
      Lease a = two.acquire(Duration.ofSeconds(5)); // stores 2
      Lease b = two.acquire(Duration.ofSeconds(5));
      assertThat(log.text()).doesNotContain("was declared with");

      DistributedSemaphore four = second.semaphore("exports", 4);
      assertThatThrownBy(() -> four.acquire(Duration.ofMillis(300)))
          .isInstanceOfSatisfying(AcquireTimeoutException.class,
              e -> assertThat(e.kind()).isEqualTo(LockKind.SEMAPHORE))
          .hasMessage("semaphore 'exports': no permit was acquired within PT0.3S: 2 permits are in force (the "
              + "count stored with the semaphore; this object declared 4, see setPermits), 2 taken at the "
              + "last attempt");
      assertThat(log.lines(MISMATCH)).isEqualTo(1);
      assertThat(four.tryAcquire()).isEmpty();
      assertThat(log.lines(MISMATCH)).as("once per semaphore object").isEqualTo(1);

      a.release();
      Lease granted = second.semaphore("exports", 4).acquire(Duration.ofSeconds(5));
      assertThat(log.lines(MISMATCH)).as("a grant reports the count too; a new object warns again").isEqualTo(2);
      granted.release();
      b.release();
    }
  }
}
