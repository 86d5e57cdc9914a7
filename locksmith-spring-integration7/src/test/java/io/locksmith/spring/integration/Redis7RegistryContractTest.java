package io.locksmith.spring.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.redis.RedisLockClient;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.LockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/** The shared contract and SI 7's cases on Locksmith's registry over a real Redis, compiled against SI 7. */
class Redis7RegistryContractTest extends RedisRegistryContractTest implements DistributedLockCases {
  @Override
  @SuppressWarnings("unchecked")
  public RenewableLockRegistry<DistributedLock> registry7() {
    return (RenewableLockRegistry<DistributedLock>) newRegistry(null);
  }

  @Test
  void isTheGenericRegistryOfSpringIntegration7() {
    LocksmithLockRegistry registry = new LocksmithLockRegistry(closeAfter(RedisLockClient.create(REDIS.server().uri())));
    LockRegistry<DistributedLock> typed = registry; // compiles only against SI 7's generic interfaces
    assertThat(typed.obtain("generic")).isInstanceOf(DistributedLock.class).isInstanceOf(LocksmithLock.class);
  }

  @Test
  void renewLockRefusesATtlLongerThanTheLease() {
    LocksmithLockRegistry registry = new LocksmithLockRegistry(closeAfter(RedisLockClient.create(REDIS.server().uri())));
    LocksmithLock lock = registry.obtain("renew-longer");
    lock.lock(Duration.ofSeconds(5));
    try {
      assertThatThrownBy(() -> registry.renewLock("renew-longer", Duration.ofSeconds(6)))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("its lease is PT5S long");
      registry.renewLock("renew-longer", Duration.ofSeconds(5)); // as long as the lease: renewed
      assertThatThrownBy(() -> registry.renewLock("renew-longer", Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> lock.lock(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
    } finally {
      lock.unlock();
    }
  }
}
