package io.locksmith.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.Lease;
import io.locksmith.LockClient;
import io.locksmith.redis.RedlockClient;
import io.locksmith.testkit.RedisServer;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** locksmith.redlock.nodes against three real redis-server processes, as a named client next to an in-JVM primary. */
class RedlockAutoConfigurationTest {

  static RedisServer n1;
  static RedisServer n2;
  static RedisServer n3;

  @BeforeAll
  static void start() {
    n1 = RedisServer.start();
    n2 = RedisServer.start();
    n3 = RedisServer.start();
  }

  @AfterAll
  static void stop() {
    for (RedisServer s : new RedisServer[] {n1, n2, n3}) {
      if (s != null) {
        s.close();
      }
    }
  }

  @Test
  void aNamedRedlockClientLocksOnAQuorumOfTheNodes() {
    new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(LocksmithAutoConfiguration.class))
        .withPropertyValues("locksmith.backend=in-jvm",
            "locksmith.clients.quorum.redlock.nodes=" + n1.uri() + "," + n2.uri() + "," + n3.uri(),
            // also bounds each node's connect at start-up: 1 s ran out on all three nodes under load average 19
            // (both Boot lines' suites at once), 5 s on two of them at load average 20; nothing here measures
            // time, so the bound only has to be generous (it is reached only when a node really is unreachable)
            "locksmith.clients.quorum.redlock.node-timeout=20s")
        .run(ctx -> {
          LockClient quorum = ctx.getBean(LockClients.class).get("quorum");
          assertThat(quorum).isInstanceOf(RedlockClient.class);
          assertThat(((RedlockClient) quorum).quorum()).isEqualTo(2);
          try (Lease lease = quorum.lock("redlock-it").acquire(Duration.ofSeconds(2))) {
            assertThat(lease.fencingToken()).isPositive();
            assertThat(quorum.lock("redlock-it").tryAcquire()).isEmpty();
          }
          assertThat(quorum.lock("redlock-it").tryAcquire()).hasValueSatisfying(Lease::release);
        });
  }
}
