/** H2 databases for tests ({@link io.locksmith.testkit.h2.H2Database}): in memory, or served over TCP. */
package io.locksmith.testkit.h2;
