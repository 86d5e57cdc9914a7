/**
 * The machinery every backend shares: both lock views over one acquisition state machine, leases and
 * their validity, the renewal scheduler, wake-up routing and exception translation. Public only so
 * that backend modules can build clients on it; <b>may change without notice</b> — applications use
 * {@code io.locksmith} only.
 */
package io.locksmith.internal;
