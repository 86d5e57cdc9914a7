/**
 * A real PostgreSQL server for tests ({@link io.locksmith.testkit.postgres.PostgresServer}), from
 * binaries on Maven Central, with stop/restart on the same port and data, SIGSTOP/SIGCONT and kill -9.
 */
package io.locksmith.testkit.postgres;
