/** Micrometer meters for Locksmith lock clients: {@link io.locksmith.micrometer.LocksmithMetrics}. */
package io.locksmith.micrometer;
