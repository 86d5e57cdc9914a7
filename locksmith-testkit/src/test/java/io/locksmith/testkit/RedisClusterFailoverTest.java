package io.locksmith.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Topology-changing cluster tests; each works on its own shard of a shared cluster. */
class RedisClusterFailoverTest {

    /**
     * A real failover is what this class tests, so its length is real time: node timeout 1 s + failure
     * agreement + replica election delay (0.5-1 s) take 2-4 s. A failure deadline, not a bound on the logic.
     */
    private static final Duration FAILOVER_BOUND = Duration.ofSeconds(20);

    private static RedisCluster cluster;

    @BeforeAll
    static void startCluster() {
        // 1 s instead of the default 2 s: the kill is detected a second sooner; a live node misses no
        // ping for a whole second even on a loaded machine (pings go every half node timeout)
        cluster = RedisCluster.builder().nodeTimeout(Duration.ofMillis(1000)).start();
    }

    @AfterAll
    static void closeCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    /** A key whose slot belongs to {@code master}. */
    private static String keyOn(RedisServer master, String prefix) {
        for (int i = 0; ; i++) {
            String key = prefix + i;
            if (cluster.masterForSlot(RedisCluster.slot(key)) == master) {
                return key;
            }
        }
    }

    private static void assertHealthy() {
        for (RedisServer node : cluster.nodes()) {
            if (node.isRunning()) {
                assertThat(TopologySupport.parseInfo(node.command("CLUSTER", "INFO")))
                        .containsEntry("cluster_state", "ok");
            }
        }
    }

    @Test
    void manualFailoverPromotesTheReplica() {
        RedisServer master = cluster.masterForSlot(0);
        RedisServer replica = cluster.replicasOf(master).get(0);
        String key = keyOn(master, "manual-");
        master.command("SET", key, "v");

        cluster.failover(replica);

        assertThat(TopologySupport.role(replica)).isEqualTo("master");
        assertThat(TopologySupport.role(master)).isEqualTo("slave");
        assertThat(cluster.replicasOf(replica)).containsExactly(master);
        assertThat(cluster.masterForSlot(0)).isSameAs(replica);
        assertThat(cluster.masters()).contains(replica).doesNotContain(master);
        assertThat(replica.command("GET", key)).isEqualTo("v"); // a manual failover loses nothing
        assertThatThrownBy(() -> master.command("GET", key)).isInstanceOf(IllegalStateException.class)
                .hasMessage("MOVED " + RedisCluster.slot(key) + " 127.0.0.1:" + replica.port());
        assertHealthy();
    }

    @Test
    void killedMasterIsReplacedByItsReplica() {
        RedisServer master = cluster.masterForSlot(16383);
        RedisServer replica = cluster.replicasOf(master).get(0);
        String key = keyOn(master, "killed-");
        master.command("SET", key, "v");
        assertThat(master.command("WAIT", "1", "5000")).isEqualTo("1");
        List<Path> dirs = new ArrayList<>();
        cluster.nodes().forEach(n -> dirs.add(n.dataDir()));

        long start = System.nanoTime();
        cluster.killMaster(master);
        assertThat(master.isRunning()).isFalse();
        RedisServer promoted = cluster.awaitFailover(FAILOVER_BOUND);
        Duration took = Duration.ofNanos(System.nanoTime() - start);

        assertThat(took).isLessThan(FAILOVER_BOUND);
        assertThat(promoted).isSameAs(replica);
        assertThat(TopologySupport.role(promoted)).isEqualTo("master");
        assertThat(cluster.masterForSlot(16383)).isSameAs(promoted);
        assertThat(promoted.command("GET", key)).isEqualTo("v");
        assertThat(cluster.masters()).hasSize(3).contains(promoted).doesNotContain(master);
        assertThat(cluster.uris()).hasSize(5).doesNotContain(master.uri());
        assertThat(cluster.nodes()).hasSize(6).contains(master);
        assertThat(dirs).allMatch(d -> d.toFile().isDirectory());
        assertHealthy();
        assertThatThrownBy(() -> cluster.awaitFailover(Duration.ofMillis(100)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("no master was killed");
    }
}
