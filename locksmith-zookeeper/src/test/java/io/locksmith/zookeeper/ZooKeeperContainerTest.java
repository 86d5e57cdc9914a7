package io.locksmith.zookeeper;

import static io.locksmith.tck.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.DistributedReadWriteLock;
import io.locksmith.Lease;
import io.locksmith.testkit.zookeeper.ZooKeeperExtension;
import io.locksmith.testkit.zookeeper.ZooKeeperTestServer;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Lock parents are container nodes: once a name's last node is gone the server deletes its parent, so
 * many distinct names leave no empty parents behind. A semaphore's parent stores its permit count and
 * stays. (A container's stat does not say it is one, so this watches the server reap them, on a server
 * of its own that looks for empty containers every 100 ms instead of every minute.)
 */
class ZooKeeperContainerTest {
  @RegisterExtension
  static final ZooKeeperExtension<ZooKeeperTestServer> ZK = ZooKeeperExtension.server(() ->
      ZooKeeperTestServer.builder().containerCheckInterval(Duration.ofMillis(100)).start());

  @Test
  void emptyLockParentsAreReapedAndSemaphoreParentsStay() throws Exception {
    try (ZooKeeperLockClient client = ZooKeeperLockClient.create(ZK.get().uri());
        RawZooKeeper raw = new RawZooKeeper(ZK.get().connectString())) {
      int names = 20;
      for (int i = 0; i < names; i++) {
        client.lock("reaped-" + i).acquire().release();
        client.fairLock("reaped-" + i).acquire().release();
        DistributedReadWriteLock rw = client.readWriteLock("reaped-" + i);
        rw.writeLock().acquire().release();
      }
      try (Lease permit = client.semaphore("kept", 2).acquire()) {
        assertThat(permit.isHeld()).isTrue();
      }
      assertThat(eventually(Duration.ofSeconds(20), () -> raw.children("/locksmith/lock").isEmpty()
          && raw.children("/locksmith/fair").isEmpty() && raw.children("/locksmith/rw").isEmpty()))
          .as("every empty lock parent was deleted by the server").isTrue();
      assertThat(raw.children("/locksmith/semaphore")).as("the semaphore keeps its count")
          .containsExactly("kept");
      assertThat(new String(raw.data("/locksmith/semaphore/kept"), java.nio.charset.StandardCharsets.US_ASCII))
          .as("the stored count").isEqualTo("2");
      // a reaped name works again at once: its parent is created anew
      try (Lease again = client.lock("reaped-0").acquire()) {
        assertThat(again.isHeld()).isTrue();
      }
    }
  }
}
