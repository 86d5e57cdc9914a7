package io.locksmith.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.Lease;
import io.locksmith.LockClient;
import io.locksmith.redis.RedisLockClient;
import io.locksmith.testkit.RedisServer;
import io.locksmith.testkit.SharedTopology;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The Redis auto-configuration against a real redis-server: a primary client and a named one. */
@SpringBootTest(classes = RedisAutoConfigurationTest.App.class)
@DirtiesContext
class RedisAutoConfigurationTest {

  @RegisterExtension
  static final SharedTopology<RedisServer> REDIS = SharedTopology.of(RedisServer.class, RedisServer::start);

  @DynamicPropertySource
  static void redis(DynamicPropertyRegistry registry) {
    registry.add("locksmith.redis.uri", () -> REDIS.get().uri());
    registry.add("locksmith.redis.command-timeout", () -> "3s");
    registry.add("locksmith.namespace", () -> "boot-it");
    registry.add("locksmith.clients.peer.redis.uri", () -> REDIS.get().uri());
    registry.add("locksmith.clients.peer.namespace", () -> "boot-it");
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class App {
    @Bean
    SampleLockedService sampleLockedService() {
      return new SampleLockedService();
    }
  }

  @Autowired LockClient client;
  @Autowired LockClients clients;
  @Autowired SampleLockedService service;

  @Test
  void thePrimaryClientIsARedisClientAndTheAnnotationLocksOnTheServer() throws Exception {
    assertThat(client).isInstanceOf(RedisLockClient.class);
    assertThat(clients.get("peer")).isInstanceOf(RedisLockClient.class).isNotSameAs(client);
    long first = service.tokenOf("redis-it");
    assertThat(service.tokenOf("redis-it")).isGreaterThan(first);
    // held by the other client (another owner, same server and namespace): the annotated call is refused
    try (Lease peer = clients.get("peer").lock("redis-it").acquire(Duration.ofSeconds(2))) {
      assertThat(client.inspect("redis-it")).as("the primary client sees the peer's hold").isPresent();
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> service.tokenOf("redis-it"))
          .isInstanceOf(LockNotAcquiredException.class);
    }
    assertThat(service.tokenOf("redis-it")).isGreaterThan(first);
  }
}
