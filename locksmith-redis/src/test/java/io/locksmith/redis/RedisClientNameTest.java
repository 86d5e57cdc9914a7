package io.locksmith.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.ClientOptions;
import io.locksmith.Lease;
import io.locksmith.LockClient;
import io.locksmith.LockInfo;
import io.locksmith.testkit.RedisCluster;
import io.locksmith.testkit.RedisSentinelGroup;
import io.locksmith.testkit.RedisServer;
import io.locksmith.testkit.RedisServerExtension;
import io.locksmith.testkit.SharedTopology;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Identity for operators: every connection a client opens carries the name {@code
 * locksmith:<clientId>[@<clientName>]} ({@code CLIENT SETNAME}), and owner ids carry the client name, so
 * {@code inspect}'s owner leads through {@code CLIENT LIST} to the process. Checked with {@code CLIENT
 * LIST} on the servers, for one node, Sentinel, Cluster and Redlock.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisClientNameTest {
  @RegisterExtension
  static final RedisServerExtension REDIS = new RedisServerExtension();
  @RegisterExtension
  static final SharedTopology<RedisSentinelGroup> SENTINELS = SharedTopology.sentinelGroup();
  @RegisterExtension
  static final SharedTopology<RedisCluster> CLUSTER = SharedTopology.cluster();

  private static final String NAME = "billing-7/4711";

  private static ClientOptions named() {
    return ClientOptions.builder().clientName(NAME).build();
  }

  @Test
  void everyConnectionToOneNodeIsNamedAndOwnerIdsCarryTheClientName() throws Exception {
    RedisServer server = REDIS.server();
    Set<String> before = ids(server);
    try (RedisLockClient locks = RedisLockClient.builder().uri(server.uri()).options(named()).build()) {
      String expected = "locksmith:" + locks.clientId() + "@" + NAME;
      List<Map<String, String>> mine = newConnections(server, before);
      assertThat(mine).as("the client's connections: command and pub/sub").hasSize(2)
          .allSatisfy(c -> assertThat(c.get("name")).isEqualTo(expected));
      assertThat(mine).as("one of them is the pub/sub connection")
          .anySatisfy(c -> assertThat(c.get("sub")).isEqualTo("1"));

      Lease lease = locks.lock("named").acquire(Duration.ofSeconds(2));
      LockInfo info = locks.inspect("named").orElseThrow();
      assertThat(info.owner()).matches(java.util.regex.Pattern.quote(locks.clientId()) + ":[0-9a-z]+@"
          + java.util.regex.Pattern.quote(NAME));
      // from the owner to the connection: the part before ':' is in the connection's name
      String clientIdOfOwner = info.owner().substring(0, info.owner().indexOf(':'));
      assertThat(clientList(server)).anySatisfy(c -> assertThat(c.get("name")).contains(clientIdOfOwner));
      assertThat(lease.release()).isTrue();
    }
  }

  @Test
  void withoutANameConnectionsCarryTheClientIdAndOwnerIdsStayAsTheyWere() throws Exception {
    RedisServer server = REDIS.server();
    Set<String> before = ids(server);
    try (RedisLockClient locks = RedisLockClient.create(server.uri())) {
      assertThat(newConnections(server, before)).hasSize(2)
          .allSatisfy(c -> assertThat(c.get("name")).isEqualTo("locksmith:" + locks.clientId()));
      Lease lease = locks.lock("unnamed").acquire(Duration.ofSeconds(2));
      assertThat(locks.inspect("unnamed").orElseThrow().owner()).matches(
          java.util.regex.Pattern.quote(locks.clientId()) + ":[0-9a-z]+");
      assertThat(lease.release()).isTrue();
    }
  }

  @Test
  void sentinelMastersConnectionsAreNamed() throws Exception {
    RedisSentinelGroup group = SENTINELS.get();
    RedisServer master = group.master();
    Set<String> before = ids(master);
    try (RedisLockClient locks = RedisLockClient.builder().uri(group.sentinelUri()).options(named()).build()) {
      String expected = "locksmith:" + locks.clientId() + "@" + NAME;
      List<Map<String, String>> mine = newConnections(master, before).stream()
          .filter(c -> !c.get("name").startsWith("sentinel-") && !c.get("flags").contains("S")).toList();
      assertThat(mine).hasSize(2).allSatisfy(c -> assertThat(c.get("name")).isEqualTo(expected));
      // the connections to the sentinels are short-lived (ask for the master, close); they take their
      // name from these URIs, as CLIENT SETNAME through Lettuce's handshake
      assertThat(locks.backend.uri().getSentinels()).hasSize(3)
          .allSatisfy(s -> assertThat(s.getClientName()).isEqualTo(expected));
      lockAndCheckOwner(locks, "sentinel-named");
    }
  }

  @Test
  void everyConnectionToEveryClusterNodeIsNamed() throws Exception {
    RedisCluster cluster = CLUSTER.get();
    Map<RedisServer, Set<String>> before = new HashMap<>();
    for (RedisServer node : cluster.nodes()) {
      before.put(node, ids(node));
    }
    String seeds = cluster.seedUri().replace("redis://", "redis-cluster://");
    try (RedisLockClient locks = RedisLockClient.builder().uri(seeds).options(named()).build()) {
      String expected = "locksmith:" + locks.clientId() + "@" + NAME;
      lockAndCheckOwner(locks, "cluster-named");
      List<Map<String, String>> all = new ArrayList<>();
      for (RedisServer master : cluster.masters()) {
        List<Map<String, String>> mine = newConnections(master, before.get(master));
        assertThat(mine).as("connections to master %s", master.port()).isNotEmpty()
            .allSatisfy(c -> assertThat(c.get("name")).isEqualTo(expected));
        all.addAll(mine);
      }
      for (RedisServer replica : cluster.replicas()) {
        assertThat(newConnections(replica, before.get(replica)))
            .filteredOn(c -> !c.get("flags").contains("M") && !c.get("flags").contains("S"))
            .allSatisfy(c -> assertThat(c.get("name")).isEqualTo(expected));
      }
      // the pub/sub connection is on one node of the cluster, a master or a replica
      List<Map<String, String>> subscribers = new ArrayList<>();
      for (RedisServer node : cluster.nodes()) {
        newConnections(node, before.get(node)).stream().filter(c -> "1".equals(c.get("sub")))
            .forEach(subscribers::add);
      }
      assertThat(subscribers).hasSize(1).allSatisfy(c -> assertThat(c.get("name")).isEqualTo(expected));
    }
  }

  @Test
  void everyRedlockNodesConnectionsAreNamed() throws Exception {
    List<RedisServer> nodes = new ArrayList<>();
    try {
      for (int i = 0; i < 3; i++) {
        nodes.add(RedisServer.start());
      }
      try (RedlockClient locks = RedlockClient.builder().nodes(nodes.stream().map(RedisServer::uri).toList())
          .options(named()).build()) {
        String expected = "locksmith:" + locks.clientId() + "@" + NAME;
        for (RedisServer node : nodes) {
          assertThat(newConnections(node, Set.of())).hasSize(2)
              .allSatisfy(c -> assertThat(c.get("name")).isEqualTo(expected));
        }
        lockAndCheckOwner(locks, "redlock-named");
      }
    } finally {
      nodes.forEach(RedisServer::close);
    }
  }

  @Test
  void theStartLineNamesTheClientAndWhereItRunsButNoCredentials() throws Exception {
    RedisServer server = REDIS.server();
    server.command("ACL", "SETUSER", "logger", "on", ">s3cret", "~*", "&*", "+@all");
    try (RedisLockClient locks = RedisLockClient.builder()
        .uri("redis://logger:s3cret@" + server.host() + ":" + server.port()).options(named()).build()) {
      String line = RedisLockClient.startMessage("Redis", locks.clientId(), locks.serverDescription(),
          locks.options(), null);
      assertThat(line).isEqualTo("Redis lock client " + locks.clientId() + " started on redis://" + server.host()
          + ":" + server.port() + " (namespace 'locksmith', name '" + NAME + "')").doesNotContain("s3cret");
    }
  }

  private static void lockAndCheckOwner(LockClient locks, String name) throws Exception {
    Lease lease = locks.lock(name).acquire(Duration.ofSeconds(5));
    assertThat(locks.inspect(name).orElseThrow().owner()).startsWith(locks.clientId() + ":").endsWith("@" + NAME);
    assertThat(lease.release()).isTrue();
  }

  /** The ids of the connections open on {@code server} now. */
  private static Set<String> ids(RedisServer server) {
    Set<String> ids = new HashSet<>();
    clientList(server).forEach(c -> ids.add(c.get("id")));
    return ids;
  }

  /** Connections opened since {@code before} was taken, without the one asking ({@code CLIENT LIST}). */
  private static List<Map<String, String>> newConnections(RedisServer server, Set<String> before) {
    return clientList(server).stream()
        .filter(c -> !before.contains(c.get("id")) && !c.get("cmd").startsWith("client")).toList();
  }

  private static List<Map<String, String>> clientList(RedisServer server) {
    List<Map<String, String>> out = new ArrayList<>();
    for (String line : server.command("CLIENT", "LIST").split("\n")) {
      if (line.isBlank()) {
        continue;
      }
      Map<String, String> fields = new HashMap<>();
      for (String field : line.trim().split(" ")) {
        int eq = field.indexOf('=');
        if (eq > 0) {
          fields.put(field.substring(0, eq), field.substring(eq + 1));
        }
      }
      out.add(fields);
    }
    return out;
  }
}
