package io.locksmith.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class RedisClusterTest {

    private static RedisCluster cluster;

    @BeforeAll
    static void startCluster() {
        cluster = RedisCluster.start();
    }

    @AfterAll
    static void closeCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    /** Sends ASKING and then GET on one connection, as a cluster client follows an ASK redirection. */
    private static String askingGet(RedisServer node, String key) throws IOException {
        try (Socket socket = new Socket()) {
            socket.setSoTimeout(5_000);
            socket.connect(new InetSocketAddress(node.host(), node.port()), 5_000);
            OutputStream out = socket.getOutputStream();
            out.write(Resp.encode("ASKING"));
            out.write(Resp.encode("GET", key));
            out.flush();
            InputStream in = new BufferedInputStream(socket.getInputStream());
            assertThat(Resp.read(in)).isEqualTo("OK");
            return Resp.render(Resp.read(in));
        }
    }

    @Test
    void startsAHealthyClusterOfThreeMastersWithOneReplicaEach() {
        List<RedisServer> nodes = cluster.nodes();
        assertThat(nodes).hasSize(6).allMatch(RedisServer::isRunning);
        assertThat(cluster.masters()).containsExactlyElementsOf(nodes.subList(0, 3));
        assertThat(cluster.replicas()).containsExactlyElementsOf(nodes.subList(3, 6));
        for (int i = 0; i < 3; i++) {
            assertThat(cluster.replicasOf(nodes.get(i))).containsExactly(nodes.get(i + 3));
            assertThat(cluster.replicasOf(nodes.get(i + 3))).isEmpty();
        }
        for (RedisServer node : nodes) {
            assertThat(TopologySupport.parseInfo(node.command("CLUSTER", "INFO")))
                    .containsEntry("cluster_state", "ok")
                    .containsEntry("cluster_slots_assigned", "16384")
                    .containsEntry("cluster_slots_ok", "16384")
                    .containsEntry("cluster_known_nodes", "6")
                    .containsEntry("cluster_size", "3");
            assertThat(cluster.nodeId(node)).matches("[0-9a-f]{40}").isEqualTo(node.command("CLUSTER", "MYID"));
            assertThat(node.port()).isBetween(1024, 55535); // Redis 6.2: the bus port is port + 10000
            assertThat(node.dataDir().resolve("nodes.conf")).isRegularFile();
        }
        assertThat(cluster.masterForSlot(0)).isSameAs(nodes.get(0));
        assertThat(cluster.masterForSlot(5460)).isSameAs(nodes.get(0));
        assertThat(cluster.masterForSlot(5461)).isSameAs(nodes.get(1));
        assertThat(cluster.masterForSlot(10921)).isSameAs(nodes.get(1));
        assertThat(cluster.masterForSlot(10922)).isSameAs(nodes.get(2));
        assertThat(cluster.masterForSlot(16383)).isSameAs(nodes.get(2));
        assertThat(cluster.uris()).hasSize(6).allMatch(uri -> uri.matches("redis://127\\.0\\.0\\.1:\\d+"));
        assertThat(cluster.seedUri()).isEqualTo(nodes.get(0).uri());
        assertThat(cluster.nodeTimeout()).isEqualTo(Duration.ofMillis(2000));
        assertThat(nodes.get(0).command("CONFIG", "GET", "cluster-node-timeout"))
                .isEqualTo("cluster-node-timeout\n2000");
    }

    @Test
    void slotAgreesWithClusterKeyslot() {
        assertThat(RedisCluster.crc16("123456789".getBytes(StandardCharsets.US_ASCII), 0, 9)).isEqualTo(0x31C3);
        List<String> keys = new ArrayList<>(List.of("", "a", "foo", "bar", "123456789", "{user1000}.following",
                "{user1000}.followers", "user1000", "foo{}{bar}", "foo{{bar}}zap", "foo{bar}{zap}", "{}", "{}x",
                "}{", "{", "}", "{a", "a}", "x{y}", "lock:{order-42}", "lock:{order-42}:fence", "zaż\u00f3łć",
                "{zaż\u00f3łć}.x", "\u6f22\u5b57", "\ud83d\udd12"));
        String alphabet = "ab{}:xyz0123_\u00e9";
        Random random = new Random(42);
        for (int i = 0; i < 200; i++) {
            StringBuilder key = new StringBuilder();
            int length = random.nextInt(24);
            for (int j = 0; j < length; j++) {
                key.append(alphabet.charAt(random.nextInt(alphabet.length())));
            }
            keys.add(key.toString());
        }
        RedisServer node = cluster.nodes().get(0);
        for (String key : keys) {
            assertThat(RedisCluster.slot(key)).as("slot of '%s'", key)
                    .isEqualTo(Integer.parseInt(node.command("CLUSTER", "KEYSLOT", key)));
        }
        assertThat(RedisCluster.slot("{user1000}.following")).isEqualTo(RedisCluster.slot("user1000"))
                .isEqualTo(RedisCluster.slot("{user1000}.followers"));
        assertThat(RedisCluster.slot("foo{}{bar}")).isNotEqualTo(RedisCluster.slot("bar"));
        assertThat(RedisCluster.slot("foo{bar}{zap}")).isEqualTo(RedisCluster.slot("bar"));
        assertThat(RedisCluster.slot("foo")).isEqualTo(12182);
    }

    @Test
    void keysSpreadOverAllThreeMastersAndOthersRedirect() {
        Map<Integer, RedisServer> owners = new HashMap<>();
        Map<RedisServer, Integer> counts = new HashMap<>();
        for (int i = 0; i < 1000; i++) {
            String key = "spread:" + i;
            RedisServer owner = owners.computeIfAbsent(RedisCluster.slot(key), cluster::masterForSlot);
            assertThat(owner.command("SET", key, Integer.toString(i))).isEqualTo("OK");
            counts.merge(owner, 1, Integer::sum);
        }
        assertThat(counts.keySet()).containsExactlyInAnyOrderElementsOf(cluster.masters());
        assertThat(counts.values()).allSatisfy(n -> assertThat(n).isBetween(250, 420));

        String key = "spread:7";
        int slot = RedisCluster.slot(key);
        RedisServer owner = cluster.masterForSlot(slot);
        assertThat(owner.command("GET", key)).isEqualTo("7");
        for (RedisServer node : cluster.nodes()) {
            if (node != owner) {
                assertThatThrownBy(() -> node.command("GET", key)).isInstanceOf(IllegalStateException.class)
                        .hasMessage("MOVED " + slot + " 127.0.0.1:" + owner.port());
            }
        }
    }

    @Test
    void migrateSlotMovesTheKeysWithAskThenMovedRedirections() throws IOException {
        String key = "migrating:{m1}";
        String sibling = "migrating:{m1}:sibling";
        int slot = RedisCluster.slot(key);
        RedisServer from = cluster.masterForSlot(slot);
        RedisServer to = cluster.masters().stream().filter(m -> m != from).findFirst().orElseThrow();
        from.command("SET", key, "v");
        from.command("SET", sibling, "s");
        List<String> askingAnswer = new ArrayList<>();

        cluster.migrateSlot(slot, from, to, () -> {
            assertThat(from.command("CLUSTER", "COUNTKEYSINSLOT", Integer.toString(slot))).isEqualTo("0");
            assertThatThrownBy(() -> from.command("GET", key)).isInstanceOf(IllegalStateException.class)
                    .hasMessage("ASK " + slot + " 127.0.0.1:" + to.port());
            // without ASKING the target still sends clients back to the owner
            assertThatThrownBy(() -> to.command("GET", key)).isInstanceOf(IllegalStateException.class)
                    .hasMessage("MOVED " + slot + " 127.0.0.1:" + from.port());
            try {
                askingAnswer.add(askingGet(to, key));
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });

        assertThat(askingAnswer).containsExactly("v");
        assertThat(cluster.masterForSlot(slot)).isSameAs(to);
        assertThat(to.command("GET", key)).isEqualTo("v");
        assertThat(to.command("GET", sibling)).isEqualTo("s");
        for (RedisServer node : cluster.nodes()) {
            assertThat(TopologySupport.parseInfo(node.command("CLUSTER", "INFO")))
                    .containsEntry("cluster_state", "ok");
            if (node != to) {
                assertThatThrownBy(() -> node.command("GET", key)).isInstanceOf(IllegalStateException.class)
                        .hasMessage("MOVED " + slot + " 127.0.0.1:" + to.port());
            }
        }
        assertThat(askingGet(to, key)).isEqualTo("v");
    }

    @Test
    void rejectsInvalidArguments() {
        int slot = RedisCluster.slot("any");
        RedisServer master = cluster.masterForSlot(slot);
        RedisServer replica = cluster.replicas().get(0);
        RedisServer otherMaster = cluster.masters().stream().filter(m -> m != master).findFirst().orElseThrow();
        assertThatThrownBy(() -> cluster.masterForSlot(16384)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> cluster.migrateSlot(-1, master, replica))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> cluster.migrateSlot(slot, master, master))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> cluster.migrateSlot(slot, master, replica))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("not a master");
        assertThatThrownBy(() -> cluster.migrateSlot(slot, otherMaster, master))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("belongs to");
        assertThatThrownBy(() -> cluster.failover(master)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("not a running replica");
        assertThatThrownBy(() -> cluster.killMaster(replica)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("not a running master");
        assertThatThrownBy(() -> cluster.awaitFailover(Duration.ofSeconds(1)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("no master was killed");
        try (RedisServer stranger = RedisServer.start()) {
            assertThatThrownBy(() -> cluster.nodeId(stranger)).isInstanceOf(IllegalArgumentException.class);
        }
        assertThatThrownBy(() -> RedisCluster.builder().nodeTimeout(Duration.ZERO).start())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("nodeTimeout");
        assertThatThrownBy(() -> RedisCluster.builder().operationTimeout(Duration.ofMillis(-1)).start())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("operationTimeout");
        assertThat(cluster.masters()).hasSize(3); // nothing changed
    }
}
