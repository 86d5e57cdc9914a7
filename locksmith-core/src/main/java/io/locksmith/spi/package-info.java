/**
 * The service-provider interface a backend implements: a handful of single-round-trip operations
 * (acquire, release, renew a batch, inspect, force unlock) and a wake-up callback. Everything else —
 * both lock views, re-entrancy bookkeeping, validity, renewal scheduling, waiting, listeners and
 * timeouts — is shared machinery in {@code io.locksmith.internal}, so every backend behaves the same.
 * Used by backend modules, not by applications.
 */
package io.locksmith.spi;
