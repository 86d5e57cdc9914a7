package io.locksmith.spring.integration;

import java.time.Duration;
import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/** Control: the shared contract and SI 7's cases on Spring Integration 7's own {@code JdbcLockRegistry} over H2. */
class SpringJdbc7RegistryContractTest extends SpringJdbcRegistryContractTest implements DistributedLockCases {
  @Override
  @SuppressWarnings("unchecked")
  public RenewableLockRegistry<DistributedLock> registry7() {
    return (RenewableLockRegistry<DistributedLock>) newRegistry(null);
  }

  /** SI 7's registry locks with its own ttl (the repository's timeToLive is no longer used). */
  @Override
  JdbcLockRegistry registryOver(DefaultLockRepository repository, Duration ttl) {
    return ttl == null ? new JdbcLockRegistry(repository) : new JdbcLockRegistry(repository, ttl);
  }

  /** SI 7 stores the holder's ttl with the row: unlike 6.5, the holder's lease decides, as in Locksmith. */
  @Override
  boolean expiryJudgedByTheHoldersLease() {
    return true;
  }

  /** The underlying ReentrantLock's, as for {@code renewLock(key)}. */
  @Override
  public Class<? extends RuntimeException> renewWithTtlNotHeldException() {
    return IllegalMonitorStateException.class;
  }
}
