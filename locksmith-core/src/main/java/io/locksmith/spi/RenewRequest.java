package io.locksmith.spi;

/**
 * One lease to extend.
 *
 * @param name the lock name
 * @param owner the lease's owner id
 * @param leaseMillis the lease time to set again
 */
public record RenewRequest(String name, String owner, long leaseMillis) {}
