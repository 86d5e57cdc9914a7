/**
 * The in-JVM backend: exact Locksmith semantics with no network, for applications' unit tests and as a
 * reference implementation that the TCK runs against.
 */
package io.locksmith.injvm;
