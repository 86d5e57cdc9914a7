package io.locksmith.redis;

import io.locksmith.testkit.LogCapture;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.BackendUnavailableException;
import io.locksmith.Lease;
import io.locksmith.LeaseState;
import io.locksmith.LockOptions;
import io.locksmith.testkit.RedisServer;
import io.locksmith.testkit.RedisServerExtension;
import io.locksmith.testkit.TcpProxy;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 13 item 11: a try-with-resources body that completed its work must not end in an exception when
 * only the release at {@code close()} failed (the backend is unreachable): that would report committed
 * work as failed. {@code close()} logs a WARN and the lock expires with its lease; {@code release()},
 * the explicit call, still throws.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisLeaseCloseTest {
  @RegisterExtension
  static final RedisServerExtension REDIS = new RedisServerExtension();
  private static final LockOptions LEASE = LockOptions.watched(Duration.ofSeconds(3));

  private static RedisLockClient through(TcpProxy proxy) {
    // 1 s: each blackholed release costs one; 500 ms once timed out the connect itself on a loaded host
    return RedisLockClient.builder().uri("redis://" + proxy.host() + ":" + proxy.port())
        .commandTimeout(Duration.ofSeconds(1)).build();
  }

  @Test
  void closeAfterTheBodyLogsAReleaseThatCannotReachRedisAndTheLockExpires() throws Exception {
    RedisServer server = REDIS.server();
    try (LogCapture log = new LogCapture();
        TcpProxy proxy = TcpProxy.start(server.host(), server.port());
        RedisLockClient direct = RedisLockClient.create(server.uri());
        RedisLockClient client = through(proxy)) {
      String outcome = null;
      long closedAt;
      try (Lease lease = client.lock("commit", LEASE).acquire(Duration.ofSeconds(5))) {
        outcome = "committed"; // the body's work is done ...
        proxy.blackhole(); // ... and the link is cut before close() releases
        closedAt = System.nanoTime();
      }
      assertThat(outcome).isEqualTo("committed");
      assertThat(log.text()).contains("lease on lock 'commit' (token")
          .contains("was closed, but the release failed")
          .contains("the server lets the lock expire within its lease of PT3S");
      assertThat(direct.inspect("commit")).as("the release never reached Redis").isPresent();

      Lease next = direct.lock("commit", LEASE).acquire(Duration.ofSeconds(10));
      long expiredAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - closedAt);
      // real time is the point: the 3 s lease, renewed last before closedAt, + allowance 3 s = 6 s
      assertThat(expiredAfter).as("ms until another client got it: the 3 s lease ran out").isLessThan(6_000);
      next.release();
      proxy.heal();
    }
  }

  @Test
  void releaseStillThrowsWhenRedisCannotBeReached() {
    RedisServer server = REDIS.server();
    try (TcpProxy proxy = TcpProxy.start(server.host(), server.port());
        RedisLockClient client = through(proxy)) {
      Lease lease = client.lock("explicit", LEASE).tryAcquire().orElseThrow();
      proxy.blackhole();
      assertThatThrownBy(lease::release).isInstanceOf(BackendUnavailableException.class);
      assertThat(lease.state()).isEqualTo(LeaseState.RELEASED);
      lease.close(); // after release(): nothing more
      proxy.heal();
    }
  }

  @Test
  void runLockedReturnsTheTasksResultWhenOnlyTheUnlockFails() throws Exception {
    RedisServer server = REDIS.server();
    try (LogCapture log = new LogCapture();
        TcpProxy proxy = TcpProxy.start(server.host(), server.port());
        RedisLockClient client = through(proxy)) {
      String result = client.lock("task", LEASE).callLocked(Duration.ofSeconds(5), () -> {
        proxy.blackhole();
        return "committed";
      });
      assertThat(result).isEqualTo("committed");
      assertThat(log.text()).contains("lock 'task': unlock after the task failed");
      proxy.heal();
    }
  }
}
