package io.locksmith.redis;

import io.locksmith.testkit.LogCapture;
import static io.locksmith.tck.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.ClientOptions;
import io.locksmith.Lease;
import io.locksmith.testkit.RedisCluster;
import io.locksmith.testkit.RedisServer;
import io.locksmith.testkit.SharedTopology;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Regression for issue 12 item 6: under a {@code volatile-*} or {@code allkeys-*} {@code maxmemory-policy}
 * Redis may evict a held lock's key and the lock is granted twice, so a client says so at start (a WARN
 * naming the node and the risk), and a server that will not tell ({@code CONFIG} refused) does not stop or
 * slow the client. Each case on real servers; the WARN is read from what slf4j-simple writes to stderr.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class RedisEvictionPolicyTest {
  @RegisterExtension
  static final SharedTopology<RedisCluster> CLUSTER = SharedTopology.cluster();

  private static final String RISK = "it may evict a held lock's key, and that lock can then be granted to a"
      + " second owner";

  private static RedisServer serverWith(String policy, String... extra) {
    List<String> args = new ArrayList<>(List.of("--maxmemory-policy", policy, "--maxmemory", "64mb"));
    args.addAll(List.of(extra));
    return RedisServer.builder().extraArgs(args.toArray(new String[0])).start();
  }

  private static String warnings(String text) {
    return text.lines().filter(l -> l.contains("WARN") && l.contains("EvictionPolicyCheck"))
        .reduce("", (a, b) -> a + b + "\n");
  }

  @Test
  void aVolatilePolicyIsReportedWithAWarnNamingTheRisk() throws Exception {
    try (RedisServer server = serverWith("volatile-lru");
        LogCapture stderr = new LogCapture();
        RedisLockClient locks = RedisLockClient.create(server.uri())) {
      String warn = warnings(stderr.text());
      assertThat(warn).as("the WARN at start").contains("127.0.0.1:" + server.port())
          .contains("maxmemory-policy volatile-lru").contains(RISK).contains("maxmemory 67108864 bytes")
          .contains("noeviction");
      assertThat(warn.lines().count()).isEqualTo(1);
      assertThat(locks.backend.evictionPolicies()).containsValue("volatile-lru");
    }
  }

  @Test
  void noevictionIsCheckedAndNotWarnedAbout() throws Exception {
    try (RedisServer server = RedisServer.start();
        LogCapture stderr = new LogCapture();
        RedisLockClient locks = RedisLockClient.create(server.uri())) {
      assertThat(locks.backend.evictionPolicies()).containsValue("noeviction");
      assertThat(warnings(stderr.text())).isEmpty();
    }
  }

  @Test
  void aServerThatRefusesConfigStillStartsTheClientWithoutDelay() throws Exception {
    try (RedisServer server = serverWith("allkeys-lru")) {
      server.command("ACL", "SETUSER", "locker", "on", ">secret", "~*", "&*", "+@all", "-config");
      String uri = "redis://locker:secret@" + server.host() + ":" + server.port();
      long start = System.nanoTime();
      try (LogCapture stderr = new LogCapture();
          RedisLockClient locks = RedisLockClient.builder().uri(uri).commandTimeout(Duration.ofSeconds(5))
              .build()) {
        long startMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        System.out.printf("[eviction] client start with CONFIG refused by ACL: %d ms%n", startMillis);
        // a wait for the refused command's timeout would take 5 s
        assertThat(startMillis).as("start (ms)").isLessThan(2_000);
        assertThat(locks.backend.evictionPolicies()).as("nothing could be read").isEmpty();
        assertThat(warnings(stderr.text())).isEmpty();
        Lease lease = locks.lock("works").tryAcquire().orElseThrow();
        assertThat(lease.release()).isTrue();
      }
    }
  }

  @Test
  void aRenamedConfigCommandStillStartsTheClient() throws Exception {
    try (RedisServer server = serverWith("volatile-ttl", "--rename-command", "CONFIG", "hidden-config")) {
      try (RedisLockClient locks = RedisLockClient.create(server.uri())) {
        assertThat(locks.backend.evictionPolicies()).isEmpty();
        Lease lease = locks.lock("works").tryAcquire().orElseThrow();
        assertThat(lease.release()).isTrue();
      }
    }
  }

  @Test
  void everyMasterOfAClusterIsChecked() throws Exception {
    RedisCluster cluster = CLUSTER.get();
    RedisServer evicting = cluster.masters().get(1);
    evicting.command("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu");
    try (LogCapture stderr = new LogCapture();
        RedisLockClient locks = RedisLockClient.builder()
            .uri(cluster.seedUri().replace("redis://", "redis-cluster://"))
            .options(ClientOptions.builder().namespace("eviction").build()).build()) {
      assertThat(locks.backend.evictionPolicies()).hasSize(cluster.masters().size())
          .containsEntry("127.0.0.1:" + evicting.port(), "allkeys-lfu");
      String warn = warnings(stderr.text());
      assertThat(warn).contains("127.0.0.1:" + evicting.port()).contains("maxmemory-policy allkeys-lfu")
          .contains(RISK);
      assertThat(warn.lines().count()).as("one WARN, for the one evicting master").isEqualTo(1);
    } finally {
      evicting.command("CONFIG", "SET", "maxmemory-policy", "noeviction");
    }
  }

  @Test
  void everyRedlockNodeIsChecked() throws Exception {
    List<RedisServer> nodes = List.of(serverWith("volatile-random"), RedisServer.start(), RedisServer.start());
    try (LogCapture stderr = new LogCapture();
        RedlockClient locks = RedlockClient.builder().nodes(nodes.stream().map(RedisServer::uri).toList())
            .nodeTimeout(Duration.ofSeconds(2)).build()) {
      // Redlock may start once a majority is connected: the third node's check can come a little later
      assertThat(eventually(Duration.ofSeconds(10), () -> warnings(stderr.text()).contains(
          "127.0.0.1:" + nodes.get(0).port()))).as("WARN for the evicting node").isTrue();
      String warn = warnings(stderr.text());
      assertThat(warn).contains("maxmemory-policy volatile-random").contains(RISK);
      assertThat(warn.lines().count()).isEqualTo(1);
      Lease lease = locks.lock("works").tryAcquire().orElseThrow();
      assertThat(lease.release()).isTrue();
    } finally {
      nodes.forEach(RedisServer::close);
    }
  }
}
