package io.locksmith.testkit.zookeeper;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;

/**
 * Expires a ZooKeeper session <em>on the server</em>, the way a real session timeout does: its
 * ephemeral nodes are deleted at once and its client is told {@code Expired} when it next talks to the
 * server. (curator-test's {@code KillSession} only makes the client believe its session expired; the
 * server keeps the session's nodes until its own timeout.) Stateless and thread-safe.
 *
 * <p>How: a second handle joins the session with its id and password, then closes it; closing a
 * session ends it on the server for every handle.
 */
public final class ZooKeeperSessions {
  private ZooKeeperSessions() {}

  /**
   * Expires the session of {@code client} on the server.
   *
   * @param connectString where to reach the ensemble (the client's own connection is not used)
   * @param client a connected ZooKeeper handle whose session to end
   * @param timeout how long to wait for the second handle to join the session
   * @throws IllegalStateException if the session could not be joined within {@code timeout} (it was
   *     already expired, or no server answered)
   * @throws InterruptedException if interrupted while waiting
   */
  public static void expire(String connectString, ZooKeeper client, Duration timeout) throws InterruptedException {
    expire(connectString, client.getSessionId(), client.getSessionPasswd(), timeout);
  }

  /**
   * Expires the session {@code sessionId} on the server.
   *
   * @param connectString where to reach the ensemble
   * @param sessionId the session's id
   * @param password the session's password
   * @param timeout how long to wait for the second handle to join the session
   * @throws IllegalStateException if the session could not be joined within {@code timeout}
   * @throws InterruptedException if interrupted while waiting
   */
  public static void expire(String connectString, long sessionId, byte[] password, Duration timeout)
      throws InterruptedException {
    CountDownLatch joined = new CountDownLatch(1);
    boolean[] expired = new boolean[1];
    Watcher watcher = event -> {
      if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
        joined.countDown();
      } else if (event.getState() == Watcher.Event.KeeperState.Expired) {
        expired[0] = true;
        joined.countDown();
      }
    };
    ZooKeeper second;
    try {
      second = new ZooKeeper(connectString, (int) Math.min(Integer.MAX_VALUE, timeout.toMillis()), watcher,
          sessionId, password);
    } catch (java.io.IOException e) {
      throw new IllegalStateException("could not open a second handle on session 0x" + Long.toHexString(sessionId), e);
    }
    try {
      if (!joined.await(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        throw new IllegalStateException("could not join session 0x" + Long.toHexString(sessionId) + " within "
            + timeout);
      }
      if (expired[0]) {
        throw new IllegalStateException("session 0x" + Long.toHexString(sessionId) + " had already expired");
      }
    } finally {
      second.close(); // ends the session on the server: its ephemeral nodes go
    }
  }
}
