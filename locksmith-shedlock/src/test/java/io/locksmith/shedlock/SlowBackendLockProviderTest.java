package io.locksmith.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.Lease;
import io.locksmith.LeaseState;
import io.locksmith.redis.RedisLockClient;
import io.locksmith.testkit.RedisServerExtension;
import io.locksmith.testkit.TcpProxy;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Regression: a job with a short {@code lockAtMostFor} was skipped whenever the backend answered slowly. The
 * provider asked for a lease of {@code lockAtMostFor} but at least 100 ms; a grant that took longer than
 * about 47 ms (100 ms less the client's drift and scheduling allowance) was given back as too late, so
 * {@code lock} returned empty although nobody held the lock (ShedLock's own 50 ms case failed that way on a
 * loaded machine). The backend lease is now at least {@link LocksmithLockProvider#SHORTEST_BACKEND_LEASE};
 * {@code lockAtMostFor} is still kept, by the provider's release timer.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class SlowBackendLockProviderTest {
  @RegisterExtension
  static final RedisServerExtension REDIS = new RedisServerExtension();

  @Test
  void aShortLockAtMostForIsGrantedOverASlowLinkAndStillEndsOnTime() throws Exception {
    try (TcpProxy slowLink = TcpProxy.start(REDIS.server().host(), REDIS.server().port());
        RedisLockClient jobs = RedisLockClient.builder().uri("redis://" + slowLink.host() + ":" + slowLink.port())
            .commandTimeout(Duration.ofSeconds(2)).build();
        RedisLockClient operator = RedisLockClient.create(REDIS.server().uri());
        LocksmithLockProvider provider = new LocksmithLockProvider(jobs)) {
      // 30 ms each way: every round trip takes at least 60 ms, more than a 100 ms lease could absorb
      slowLink.delay(Duration.ofMillis(30));
      Duration atMost = Duration.ofMillis(100); // the old floor: a lease of 100 ms was asked for
      Optional<SimpleLock> lock = provider.lock(
          new LockConfiguration(ClockProvider.now(), "slow-link-job", atMost, Duration.ZERO));
      assertThat(lock).as("granted although each round trip takes over 60 ms").isPresent();
      Lease lease = LocksmithLockProvider.currentLease().orElseThrow();
      // the provider's timer releases it at lockAtMostFor; the poll's deadline only says when to give up
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (operator.inspect("slow-link-job").isPresent() && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertThat(operator.inspect("slow-link-job")).as("free after lockAtMostFor").isEmpty();
      assertThat(lease.state()).as("released by the provider's timer, not run out").isEqualTo(LeaseState.RELEASED);
    }
  }
}
