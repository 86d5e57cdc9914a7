package io.locksmith.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.locksmith.Lease;
import io.locksmith.testkit.RedisServerExtension;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 13 item 8: a lock client built on the application's Lettuce {@code ClientResources} or {@code
 * RedisClient} runs on those threads, and its {@code close()} leaves them, and the application's client,
 * running.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisSharedResourcesTest {
  @RegisterExtension
  static final RedisServerExtension REDIS = new RedisServerExtension();

  private static Set<String> lettuceThreads() {
    return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
        .filter(n -> n.startsWith("lettuce-")).collect(Collectors.toSet());
  }

  private static void useLocks(RedisLockClient locks) throws InterruptedException {
    try (Lease lease = locks.lock("shared").acquire(Duration.ofSeconds(5))) {
      assertThat(lease.isHeld()).isTrue();
    }
    assertThat(locks.lock("shared").acquireAsync(Duration.ofSeconds(5)).toCompletableFuture()
        .thenCompose(Lease::releaseAsync).join()).isTrue();
  }

  @Test
  void onTheApplicationsClientResourcesNoThreadsOfItsOwnAndNothingShutDownAtClose() throws Exception {
    ClientResources app = DefaultClientResources.builder().ioThreadPoolSize(2).computationThreadPoolSize(2).build();
    RedisClient appClient = RedisClient.create(app, REDIS.server().uri());
    try (StatefulRedisConnection<String, String> appConnection = appClient.connect()) {
      // the application's own groups all have a thread before counting (Netty starts them lazily)
      for (int i = 0; i < 4; i++) {
        app.eventExecutorGroup().submit(() -> { }).get(10, TimeUnit.SECONDS);
      }
      app.timer().newTimeout(t -> { }, 1, TimeUnit.MILLISECONDS);
      Set<String> groupsBefore = groups();
      try (RedisLockClient locks = RedisLockClient.builder().uri(REDIS.server().uri()).clientResources(app)
          .build()) {
        useLocks(locks);
        Set<String> started = groups();
        started.removeAll(groupsBefore);
        assertThat(started).as("Lettuce thread groups the lock client started of its own").isEmpty();
      }
      assertThat(app.eventExecutorGroup().isShuttingDown()).as("the application's resources still run").isFalse();
      assertThat(appConnection.sync().ping()).isEqualTo("PONG");
      try (StatefulRedisConnection<String, String> again = appClient.connect()) {
        assertThat(again.sync().ping()).isEqualTo("PONG");
      }
    } finally {
      appClient.shutdown();
      app.shutdown(0, 2, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS);
    }
  }

  /**
   * @return the groups of the Lettuce threads alive now: a group's threads are named {@code
   *     <prefix>-<group>-<thread>}, and a client on resources of its own starts new groups
   */
  private static Set<String> groups() {
    return lettuceThreads().stream().map(n -> n.substring(0, n.lastIndexOf('-'))).collect(Collectors.toSet());
  }

  @Test
  void onTheApplicationsRedisClientItsOptionsAreUntouchedAndItStaysOpen() throws Exception {
    RedisClient appClient = RedisClient.create(REDIS.server().uri());
    try (StatefulRedisConnection<String, String> appConnection = appClient.connect()) {
      io.lettuce.core.ClientOptions appOptions = appClient.getOptions();
      try (RedisLockClient locks = RedisLockClient.builder().uri(REDIS.server().uri()).redisClient(appClient)
          .build()) {
        useLocks(locks);
        assertThat(appClient.getOptions()).as("the application's client options are not changed")
            .isSameAs(appOptions);
      }
      assertThat(appClient.getResources().eventExecutorGroup().isShuttingDown()).isFalse();
      assertThat(appConnection.sync().ping()).isEqualTo("PONG");
    } finally {
      appClient.shutdown();
    }
  }

  @Test
  void resourcesAndAClientWithOtherResourcesAreRejectedBeforeConnecting() {
    ClientResources one = DefaultClientResources.create();
    RedisClient other = RedisClient.create();
    try {
      assertThatThrownBy(() -> RedisLockClient.builder().uri(REDIS.server().uri()).clientResources(one)
          .redisClient(other).build())
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not both");
    } finally {
      other.shutdown();
      one.shutdown();
    }
  }
}
