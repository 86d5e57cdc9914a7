/**
 * Spring Integration's {@code LockRegistry} over Locksmith: {@link
 * io.locksmith.spring.integration.LocksmithLockRegistry}.
 */
package io.locksmith.spring.integration;
