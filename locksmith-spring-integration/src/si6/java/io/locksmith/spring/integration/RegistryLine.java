package io.locksmith.spring.integration;

import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/**
 * The Spring Integration 6.5 interfaces {@link LocksmithLockRegistry} implements. The registry's code is
 * shared by both Spring Integration lines; this type (one per line, compiled against that line) is what
 * differs: SI 7 made the registries generic in their lock type.
 */
interface RegistryLine extends ExpirableLockRegistry, RenewableLockRegistry {
}
