package io.locksmith.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.locksmith.BackendConfigurationException;
import io.locksmith.testkit.RedisServer;
import io.locksmith.testkit.RedisServerExtension;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A connect that fails at its last step (a SUBSCRIBE refused by an ACL that allows no channel) closes what it
 * opened and leaves the I/O thread free. The cleanup runs on the Lettuce I/O thread that saw the failure, so
 * it must never wait there: a blocking {@code close()} of a channel whose close another thread had begun (a
 * client closed while its connect completed) waits for that same thread, and hung a suite fork for ever
 * under load. That interleaving needs a race this test cannot force; it covers the cleanup path itself, on
 * a client with a single I/O thread.
 */
class RedisConnectCleanupTest {
  @RegisterExtension
  static final RedisServerExtension REDIS = new RedisServerExtension();

  @Test
  void aConnectRefusedAtItsSubscribeClosesWhatItOpenedWithoutHangingTheIoThread() throws Exception {
    RedisServer server = REDIS.server();
    // may run scripts, may not subscribe to any channel: the connect fails at its last step
    server.command("ACL", "SETUSER", "nochannels", "on", ">pw", "~*", "resetchannels", "+@all");
    String uri = "redis://nochannels:pw@" + server.host() + ":" + server.port();
    ClientResources oneIoThread = DefaultClientResources.builder().ioThreadPoolSize(1).build();
    try {
      // built on another thread, so that a hang fails this test instead of stalling the run
      CompletableFuture<Throwable> attempt = CompletableFuture.supplyAsync(() -> {
        try {
          RedisLockClient.builder().uri(uri).clientResources(oneIoThread).build().close();
          return null;
        } catch (Throwable t) {
          return t;
        }
      });
      // failure deadline only: a refused connect answers within a few command round trips
      Throwable failure = attempt.get(30, TimeUnit.SECONDS);
      assertThat(failure).isInstanceOf(BackendConfigurationException.class).hasMessageContaining("NOPERM");
      // and the I/O thread is free: another client on the same resources connects and works
      try (RedisLockClient client = RedisLockClient.builder().uri(server.uri()).clientResources(oneIoThread)
          .build()) {
        assertThat(CompletableFuture.supplyAsync(() -> client.lock("after-cleanup").tryAcquire().isPresent())
            .get(30, TimeUnit.SECONDS)).isTrue();
      }
    } finally {
      oneIoThread.shutdown(0, 2, TimeUnit.SECONDS);
    }
  }
}
