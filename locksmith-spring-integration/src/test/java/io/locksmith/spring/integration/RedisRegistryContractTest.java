package io.locksmith.spring.integration;

import io.locksmith.redis.RedisLockClient;
import io.locksmith.testkit.RedisServerExtension;
import java.time.Duration;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/** The LockRegistry contract on Locksmith's Redis backend (a real server): one client per registry. */
class RedisRegistryContractTest extends LockRegistryContract {
  @RegisterExtension
  static final RedisServerExtension REDIS = new RedisServerExtension();

  @Override
  RenewableLockRegistry newRegistry(Duration ttl) {
    RedisLockClient client = closeAfter(RedisLockClient.create(REDIS.server().uri()));
    return ttl == null ? new LocksmithLockRegistry(client)
        : LocksmithLockRegistry.builder(client).fixedLease(ttl).build();
  }
}
