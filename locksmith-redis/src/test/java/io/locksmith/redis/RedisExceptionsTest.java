package io.locksmith.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.locksmith.BackendUnavailableException;
import io.locksmith.LockException;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/** The one translation point from Lettuce's exceptions to Locksmith's. */
class RedisExceptionsTest {
  @Test
  void transientRepliesMeanUnavailableOthersMeanRefused() {
    for (String reply : new String[] {"LOADING Redis is loading", "READONLY You can't write against a read only replica.",
        "MASTERDOWN Link with MASTER is down", "BUSY Redis is busy running a script", "TRYAGAIN", "CLUSTERDOWN"}) {
      assertThat(RedisExceptions.translate(new RedisCommandExecutionException(reply), "acquire"))
          .as(reply).isInstanceOf(BackendUnavailableException.class).hasMessageContaining(reply);
    }
    RuntimeException refused = RedisExceptions.translate(
        new CompletionException(new RedisCommandExecutionException("WRONGPASS invalid username-password pair")), "connect");
    assertThat(refused).isExactlyInstanceOf(LockException.class).hasMessageContaining("WRONGPASS");
    assertThat(RedisExceptions.translate(new RedisCommandTimeoutException("timed out"), "release"))
        .isInstanceOf(BackendUnavailableException.class).hasCauseInstanceOf(RedisCommandTimeoutException.class);
  }

  @Test
  void timeoutsAndReadOnlyRepliesAreWhatMakesASentinelClientRecheckItsMaster() {
    assertThat(RedisExceptions.mayBeStaleMaster(new CompletionException(new RedisCommandTimeoutException("t"))))
        .isTrue();
    assertThat(RedisExceptions.mayBeStaleMaster(new RedisCommandExecutionException(
        "READONLY You can't write against a read only replica."))).isTrue();
    assertThat(RedisExceptions.mayBeStaleMaster(new RedisCommandExecutionException("OOM command not allowed")))
        .isFalse();
    assertThat(RedisExceptions.mayBeStaleMaster(new IllegalStateException("connection closed"))).isFalse();
  }
}
