package io.locksmith.redis;

import static io.locksmith.tck.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.DistributedLock;
import io.locksmith.Lease;
import io.locksmith.LockOptions;
import io.locksmith.testkit.RedisServer;
import io.locksmith.testkit.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The Lock view's hold count on a Redlock whose nodes counted differently (issue 12, item 2): a re-entry
 * reports the highest count among the nodes that granted it and a partial release the highest count
 * left, so a node that missed an unlock used to push the thread's count up and keep the lock.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedlockHoldCountTest {
  /** Generous: the node behind the proxy must connect and load the scripts within it, on a loaded machine. */
  private static final Duration NODE_TIMEOUT = Duration.ofSeconds(1);
  private static final LockOptions LONG = LockOptions.watched(Duration.ofSeconds(30));

  @RegisterExtension
  static final RedlockNodes NODES = new RedlockNodes(3);

  private static String key(String name) {
    return "locksmith:lock:{" + name + "}";
  }

  private static String holds(int node, String name) {
    return LockValues.field(NODES.get(node).command("GET", key(name)), LockValues.HOLDS);
  }

  /**
   * Regression: node 2 missed a partial unlock (its link dropped the request), so it counted one hold more
   * than the others. After the next re-entry the inner unlock took node 2's count as the thread's (2
   * instead of 1), and the last unlock freed nodes 0 and 1 while the thread still held a hold and node 2
   * kept the key.
   */
  @Test
  void aNodeThatMissedAnUnlockDoesNotRaiseTheCountOrKeepTheLock() throws Exception {
    String name = "redlock-hold-count";
    RedisServer third = NODES.get(2);
    try (TcpProxy proxy = TcpProxy.start(third.host(), third.port())) {
      List<String> uris = new ArrayList<>(NODES.uris().subList(0, 2));
      uris.add("redis://" + proxy.host() + ":" + proxy.port());
      try (RedlockClient client = RedlockClient.builder().nodes(uris).nodeTimeout(NODE_TIMEOUT).build();
          RedlockClient other = RedlockClient.builder().nodes(NODES.uris()).nodeTimeout(NODE_TIMEOUT).build()) {
        assertThat(eventually(Duration.ofSeconds(10), () -> reachesNode2(client)))
            .as("the client is connected to node 2").isTrue();
        DistributedLock lock = client.lock(name, LONG);
        lock.lock();
        lock.lock();
        // a Redlock call returns at a majority: wait until node 2 has applied the re-entry as well
        assertThat(eventually(Duration.ofSeconds(5), () -> "2".equals(holds(2, name))))
            .as("node 2 counts two holds").isTrue();
        proxy.blackhole(); // node 2 never sees the next unlock; nodes 0 and 1 are a majority
        lock.unlock();
        assertThat(lock.getHoldCount()).isEqualTo(1);
        proxy.resetAll();
        proxy.heal();
        assertThat(eventually(Duration.ofSeconds(10), () -> reachesNode2(client)))
            .as("the client is connected to node 2 again").isTrue();
        assertThat(List.of(holds(0, name), holds(1, name), holds(2, name))).as("holds per node")
            .containsExactly("1", "1", "2");

        lock.lock();
        assertThat(lock.getHoldCount()).as("lock, lock, unlock, lock: two holds").isEqualTo(2);
        lock.unlock();
        assertThat(lock.getHoldCount()).as("after the inner unlock (node 2 still counts 2)").isEqualTo(1);
        assertThat(lock.isHeldByCurrentThread()).isTrue();
        lock.unlock();

        assertThat(lock.isHeldByCurrentThread()).as("held after three lock() and three unlock()").isFalse();
        for (int i = 0; i < 3; i++) {
          assertThat(NODES.get(i).command("EXISTS", key(name))).as("key left on node " + i).isEqualTo("0");
        }
        Optional<Lease> next = other.lock(name).tryAcquire();
        assertThat(next).as("another client gets it").isPresent();
        next.get().release();
      }
    }
  }

  /** Whether a grant of this client reaches node 2 (its connection through the proxy is back). */
  private static boolean reachesNode2(RedlockClient client) {
    String probe = "redlock-hold-count-probe";
    Lease lease = client.lock(probe, LockOptions.fixed(Duration.ofSeconds(5))).tryAcquire().orElseThrow();
    try {
      return "1".equals(NODES.get(2).command("EXISTS", key(probe)));
    } finally {
      lease.release();
    }
  }
}
