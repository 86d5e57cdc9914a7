package io.locksmith.spring.integration;

import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/** Control: the shared contract and SI 7's cases on Spring Integration 7's own {@code RedisLockRegistry}. */
class SpringRedis7RegistryContractTest extends SpringRedisRegistryContractTest implements DistributedLockCases {
  @Override
  @SuppressWarnings("unchecked")
  public RenewableLockRegistry<DistributedLock> registry7() {
    return (RenewableLockRegistry<DistributedLock>) newRegistry(null);
  }
}
