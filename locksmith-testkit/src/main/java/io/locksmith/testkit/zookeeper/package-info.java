/**
 * Real ZooKeeper for tests, inside the test JVM, from curator-test: a single server
 * ({@link io.locksmith.testkit.zookeeper.ZooKeeperTestServer}), an ensemble that can lose and regain its
 * leader or all members ({@link io.locksmith.testkit.zookeeper.ZooKeeperEnsemble}), a JUnit 5 extension
 * that shares one of each per test run ({@link io.locksmith.testkit.zookeeper.ZooKeeperExtension}), a
 * true server-side session expiry ({@link io.locksmith.testkit.zookeeper.ZooKeeperSessions}) and
 * four-letter words ({@link io.locksmith.testkit.zookeeper.FourLetterWords}). To partition one client, put
 * a {@link io.locksmith.testkit.TcpProxy} per member between it and the ensemble.
 *
 * <p>The servers do not fsync their transaction log (system property {@code zookeeper.forceSync=no},
 * unless the build sets it): writes are then fast on a loaded machine, and the data still survives a
 * restart within the test JVM.
 *
 * <p>This package needs {@code org.apache.curator:curator-test} on the classpath, which the testkit
 * declares as optional: a module using it declares the dependency itself. ZooKeeper logs a lot at INFO;
 * set {@code org.apache.zookeeper} to {@code error} and {@code org.apache.curator} to {@code warn} in the
 * test logging configuration. ZooKeeper writes a small properties file into {@code java.io.tmpdir} at
 * every server start; the servers here delete theirs once started, and their data directories when
 * closed.
 */
package io.locksmith.testkit.zookeeper;
