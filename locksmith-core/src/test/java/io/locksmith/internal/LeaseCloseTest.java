package io.locksmith.internal;

import io.locksmith.testkit.LogCapture;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.BackendUnavailableException;
import io.locksmith.Lease;
import io.locksmith.LeaseState;
import io.locksmith.LockClient;
import io.locksmith.LockOptions;
import io.locksmith.injvm.InJvmLockServer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code Lease.close()} after the body is done does not throw when only the release failed (issue 13
 * item 11); {@code release()} still does. The Redis version of this, with the link cut, is
 * {@code RedisLeaseCloseTest}.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class LeaseCloseTest {

  @Test
  void closeLogsAFailedReleaseInsteadOfThrowingWhileReleaseStillThrows() {
    InJvmLockServer server = new InJvmLockServer();
    try (LogCapture log = new LogCapture(); LockClient client = server.newClient()) {
      LockOptions fixed = LockOptions.fixed(Duration.ofSeconds(5));
      String work;
      try (Lease lease = client.lock("commit", fixed).tryAcquire().orElseThrow()) {
        work = "committed";
        server.setReachable(false);
      }
      assertThat(work).isEqualTo("committed");
      assertThat(log.text()).contains("lease on lock 'commit' (token")
          .contains("was closed, but the release failed")
          .contains("the server lets the lock expire within its lease of PT5S");

      server.setReachable(true);
      Lease explicit = client.lock("explicit", fixed).tryAcquire().orElseThrow();
      server.setReachable(false);
      assertThatThrownBy(explicit::release).isInstanceOf(BackendUnavailableException.class);
      assertThat(explicit.state()).isEqualTo(LeaseState.RELEASED);
      explicit.close(); // after a release, nothing to do
      server.setReachable(true);
    }
  }
}
