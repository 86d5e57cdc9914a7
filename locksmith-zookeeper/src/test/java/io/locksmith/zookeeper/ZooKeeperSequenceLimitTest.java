package io.locksmith.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.ClientOptions;
import io.locksmith.Lease;
import io.locksmith.LockException;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.server.DataTree;
import org.apache.zookeeper.server.persistence.FileTxnSnapLog;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 23, item 18: a lock parent whose create counter reached 2^31 − 1. ZooKeeper derives a sequential
 * child's suffix from that signed 32-bit counter; from then on it names every new child {@code …2147483647}
 * (the counter wraps negative and the server keeps the larger value), and ordering by the suffix turned
 * into hash order: a newcomer was granted while the holder held. Semaphore parents are persistent, so a
 * busy semaphore reaches the limit for good.
 *
 * <p>Two billion creates are out of reach for a test, so the server starts from a snapshot, written with
 * ZooKeeper's own {@code DataTree} and {@code FileTxnSnapLog}, in which the semaphore's parent has seen
 * 2^31 − 3 creates (its counter, the next suffix, stands at 2147483645): the server's own sequential creates then cross the limit. A real server, real names.
 */
class ZooKeeperSequenceLimitTest {
  private static final String NAME = "busy-semaphore";
  private static TestingServer server;

  @BeforeAll
  static void startFromSnapshot() throws Exception {
    File data = Files.createTempDirectory("zk-sequence-limit").toFile();
    String namespace = "/" + ClientOptions.defaults().namespace();
    String parent = namespace + "/semaphore/" + NodeNames.encode(NAME);
    DataTree tree = new DataTree();
    long zxid = 0;
    long now = System.currentTimeMillis();
    for (String path : List.of(namespace, namespace + "/semaphore")) {
      tree.createNode(path, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, 0, -1, ++zxid, now);
    }
    tree.createNode(parent, "1".getBytes(StandardCharsets.US_ASCII), ZooDefs.Ids.OPEN_ACL_UNSAFE, 0, -1, ++zxid, now);
    // the parent's create counter stands at 2^31 - 3: the next children are ...645, ...646, ...647, ...647, ...
    tree.setCversionPzxid(parent, Integer.MAX_VALUE - 2, zxid);
    tree.lastProcessedZxid = zxid;
    FileTxnSnapLog snapshots = new FileTxnSnapLog(data, data);
    try {
      snapshots.save(tree, new ConcurrentHashMap<>(), false);
    } finally {
      snapshots.close();
    }
    server = new TestingServer(-1, data); // deletes the directory at close
  }

  @AfterAll
  static void stop() throws Exception {
    if (server != null) {
      server.close();
    }
  }

  private static String uri() {
    return "zookeeper://" + server.getConnectString();
  }

  @Test
  void atTheLastSequenceAnAcquisitionIsRefusedClearlyNeverGrantedOutOfOrder() throws Exception {
    try (ZooKeeperLockClient holderClient = ZooKeeperLockClient.create(uri());
        ZooKeeperLockClient newcomers = ZooKeeperLockClient.create(uri());
        RawZooKeeper raw = new RawZooKeeper(server.getConnectString())) {
      String parent = holderClient.backend.parent(Side.PERMIT, NAME);
      // below the limit the order holds as always: one permit, a holder at ...645, a newcomer at ...646 waits
      Lease first = holderClient.semaphore(NAME, 1).tryAcquire().orElseThrow();
      assertThat(raw.children(parent)).singleElement().asString().endsWith("2147483645");
      assertThat(newcomers.semaphore(NAME, 1).tryAcquire()).as("the one permit is taken").isEmpty();
      first.release();

      // the next create is ...647, and so is every one after it
      List<String> failures = new ArrayList<>();
      Optional<Lease> atLimit = attempt(holderClient, failures);
      List<Lease> alsoGranted = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        attempt(newcomers, failures).ifPresent(alsoGranted::add);
      }
      assertThat(atLimit.isPresent() && !alsoGranted.isEmpty())
          .as("a newcomer was granted the one permit while a holder held it (%s granted, %s newcomers)",
              atLimit.isPresent(), alsoGranted.size()).isFalse();
      assertThat(atLimit).as("a node at the last sequence is not granted").isEmpty();
      assertThat(failures).as("every attempt at the limit says why it is refused").hasSize(11)
          .allSatisfy(m -> assertThat(m).contains("used up the sequence numbers").contains(parent));
      assertThat(raw.children(parent)).as("refused attempts leave no node behind").isEmpty();

      // an operator deletes the semaphore's parent: the count starts again, the declared permits are stored again
      raw.curator.delete().forPath(parent);
      Lease again = newcomers.semaphore(NAME, 1).tryAcquire().orElseThrow();
      assertThat(raw.children(parent)).singleElement().asString().endsWith("0000000000");
      assertThat(holderClient.semaphore(NAME, 1).tryAcquire()).as("one permit again").isEmpty();
      again.release();
      atLimit.ifPresent(Lease::release);
      alsoGranted.forEach(Lease::release);
    }
  }

  private static Optional<Lease> attempt(ZooKeeperLockClient client, List<String> failures) {
    try {
      return client.semaphore(NAME, 1).tryAcquire();
    } catch (LockException e) {
      failures.add(e.getMessage());
      return Optional.empty();
    }
  }
}
