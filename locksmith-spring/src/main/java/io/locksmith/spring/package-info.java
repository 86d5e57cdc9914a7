/**
 * Spring Boot support for Locksmith: auto-configured lock clients ({@link io.locksmith.spring.LocksmithProperties},
 * {@link io.locksmith.spring.LockClients}, {@link io.locksmith.spring.LockClientCustomizer}), the
 * {@link io.locksmith.spring.DistributedLock} annotation with {@link io.locksmith.spring.LockedCall}, and
 * {@link io.locksmith.spring.LockTemplate}.
 */
package io.locksmith.spring;
