package io.locksmith.zookeeper;

import org.apache.zookeeper.client.ZKClientConfig;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Makes the ZooKeeper clients created by one test class use ZooKeeper's Netty transport instead of its
 * default NIO one, by setting {@code zookeeper.clientCnxnSocket} before the class and restoring it after.
 *
 * <p>Why: closing an NIO client sleeps a fixed 100 ms ({@code ClientCnxnSocketNIO.cleanup}); the Netty
 * client closes at once. The contract suites close two or three clients per test, so NIO alone cost them
 * some 40 s per run. The transport is below everything Locksmith does (it sees the same sessions, events
 * and replies), and the TLS tests use Netty in production anyway; {@link ZooKeeperLockTckTest} and every
 * session, failure and partition test keep the default NIO transport, so both are exercised.
 *
 * <p>The property is read when a {@code ZooKeeper} handle is created (a client's start, or a new session
 * after expiry), so it must hold for the whole class. Surefire runs a fork's classes one after another,
 * so no other class sees it.
 */
final class NettyClientTransport implements BeforeAllCallback, AfterAllCallback {
  private static final String KEY = ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET;
  private String previous;

  @Override
  public void beforeAll(ExtensionContext context) {
    previous = System.getProperty(KEY);
    System.setProperty(KEY, "org.apache.zookeeper.ClientCnxnSocketNetty");
  }

  @Override
  public void afterAll(ExtensionContext context) {
    if (previous == null) {
      System.clearProperty(KEY);
    } else {
      System.setProperty(KEY, previous);
    }
  }
}
