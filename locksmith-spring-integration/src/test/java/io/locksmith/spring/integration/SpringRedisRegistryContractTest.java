package io.locksmith.spring.integration;

import io.locksmith.testkit.RedisServerExtension;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.integration.redis.util.RedisLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/**
 * Control: the same contract on Spring Integration's own {@code RedisLockRegistry} (6.5.3, its defaults),
 * on the same Redis server. Each registry has its own client id, so two are two owners.
 */
class SpringRedisRegistryContractTest extends LockRegistryContract {
  @RegisterExtension
  static final RedisServerExtension REDIS = new RedisServerExtension();
  private static LettuceConnectionFactory factory;

  @BeforeAll
  static void connect() {
    factory = new LettuceConnectionFactory(
        new RedisStandaloneConfiguration(REDIS.server().host(), REDIS.server().port()));
    factory.afterPropertiesSet();
    factory.start();
  }

  @AfterAll
  static void disconnect() {
    factory.destroy();
  }

  @Override
  RenewableLockRegistry newRegistry(Duration ttl) {
    RedisLockRegistry registry = ttl == null ? new RedisLockRegistry(factory, "si-contract")
        : new RedisLockRegistry(factory, "si-contract", ttl.toMillis());
    closeAfter(registry::destroy);
    return registry;
  }

  /** Its renewal checks only that the registry (its client id) holds the key in Redis, not the thread. */
  @Override
  boolean renewRequiresHoldingThread() {
    return false;
  }

  /** An interrupt during a Redis command fails the command; the registry wraps that failure. */
  @Override
  Class<? extends RuntimeException> interruptedBackendCallException() {
    return org.springframework.dao.CannotAcquireLockException.class;
  }
}
