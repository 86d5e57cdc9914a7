package io.locksmith.spring.integration;

import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/**
 * The Spring Integration 7 interfaces {@link LocksmithLockRegistry} implements: those of Spring's own Redis
 * and JDBC registries, generic in {@link DistributedLock}, so that an injection point typed {@code
 * LockRegistry<DistributedLock>} takes it. The registry's code is shared with the SI 6.5 line
 * (locksmith-spring-integration); this type and {@link LocksmithLock} are what differ.
 */
interface RegistryLine extends ExpirableLockRegistry<DistributedLock>, RenewableLockRegistry<DistributedLock> {
}
