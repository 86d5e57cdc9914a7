package io.locksmith.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class RedisSentinelGroupTest {

    private static final Duration REPLICATION_BOUND = Duration.ofSeconds(10);
    /**
     * Failure deadline of a real failover: down-after (0.5 s in the failover case) + agreement + election +
     * promotion take 3-6 s; one failed election adds 6 s (twice the failover timeout).
     */
    private static final Duration FAILOVER_BOUND = Duration.ofSeconds(20);

    /** Shared by the tests that leave the topology as they found it. */
    private static RedisSentinelGroup group;

    @BeforeAll
    static void startGroup() {
        group = RedisSentinelGroup.start();
    }

    @AfterAll
    static void closeGroup() {
        if (group != null) {
            group.close();
        }
    }

    private static Map<String, String> replication(RedisServer node) {
        return TopologySupport.info(node, "replication");
    }

    @Test
    void startsAMasterTwoReplicasAndThreeSentinels() {
        RedisServer master = group.master();
        assertThat(group.masterName()).isEqualTo("locksmith");
        assertThat(group.nodes()).hasSize(3).first().isSameAs(master);
        assertThat(group.replicas()).hasSize(2).doesNotContain(master).allMatch(RedisServer::isRunning);
        assertThat(replication(master)).containsEntry("role", "master").containsEntry("connected_slaves", "2");
        for (RedisServer replica : group.replicas()) {
            assertThat(replication(replica))
                    .containsEntry("role", "slave")
                    .containsEntry("master_port", Integer.toString(master.port()))
                    .containsEntry("master_link_status", "up");
        }

        assertThat(group.sentinels()).hasSize(3);
        List<String> addresses = new ArrayList<>();
        for (RedisServer sentinel : group.sentinels()) {
            assertThat(TopologySupport.role(sentinel)).isEqualTo("sentinel");
            assertThat(sentinel.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "locksmith"))
                    .isEqualTo(master.host() + "\n" + master.port());
            Map<String, String> state = TopologySupport.pairs(TopologySupport.call(sentinel, Duration.ofSeconds(5),
                    "SENTINEL", "MASTER", "locksmith"));
            assertThat(state).containsEntry("quorum", "2").containsEntry("num-slaves", "2")
                    .containsEntry("num-other-sentinels", "2").containsEntry("down-after-milliseconds", "1000")
                    .containsEntry("failover-timeout", "3000");
            addresses.add("127.0.0.1:" + sentinel.port());
        }
        assertThat(group.sentinelUri())
                .isEqualTo("redis-sentinel://" + String.join(",", addresses) + "?sentinelMasterId=locksmith");
    }

    @Test
    void writesReachTheReplicasOnceAwaitReplicationReturns() {
        String key = "replicated-" + System.nanoTime();
        RedisServer master = group.master();
        for (int i = 0; i < 100; i++) {
            master.command("SET", key + ":" + i, "v" + i);
        }
        group.awaitReplication(REPLICATION_BOUND);
        for (RedisServer replica : group.replicas()) {
            assertThat(replica.command("GET", key + ":0")).isEqualTo("v0");
            assertThat(replica.command("GET", key + ":99")).isEqualTo("v99");
        }
    }

    @Test
    void aStrayReplicaIsPointedBackAtTheMaster() {
        RedisServer master = group.master();
        RedisServer stray = group.replicas().get(0);
        // as a restarted old master comes back: a master of its own, which other replicas may follow
        stray.command("REPLICAOF", "NO", "ONE");
        assertThat(group.repointReplicas()).as("re-pointed (unless a sentinel was quicker)").isSubsetOf(stray);
        String key = "repointed-" + System.nanoTime();
        master.command("SET", key, "v");
        group.awaitReplication(REPLICATION_BOUND);
        assertThat(stray.command("GET", key)).isEqualTo("v");
        assertThat(group.repointReplicas()).as("nothing left to re-point").isEmpty();
    }

    @Test
    void frozenReplicationKeepsWritesOffTheReplicasUntilThawed() {
        String key = "frozen-" + System.nanoTime();
        RedisServer master = group.master();
        group.freezeReplication();
        try {
            assertThat(group.isReplicationFrozen()).isTrue();
            assertThat(master.command("SET", key, "only-on-the-master")).isEqualTo("OK");
            assertThat(master.command("GET", key)).isEqualTo("only-on-the-master");
            // Longer than the replicas' 1 s reconnect cycle: they try to reconnect and are refused.
            assertThatThrownBy(() -> group.awaitReplication(Duration.ofMillis(1500)))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("timed out");
            assertThat(replication(master)).containsEntry("connected_slaves", "0");
            for (RedisServer replica : group.replicas()) {
                assertThat(replica.command("GET", key)).isNull();
                assertThat(replication(replica)).containsEntry("master_link_status", "down");
            }
            // the sentinels are not disturbed
            assertThat(group.master()).isSameAs(master);
        } finally {
            group.thawReplication();
        }
        assertThat(group.isReplicationFrozen()).isFalse();
        group.awaitReplication(REPLICATION_BOUND);
        for (RedisServer replica : group.replicas()) {
            assertThat(replica.command("GET", key)).isEqualTo("only-on-the-master");
        }
    }

    @Test
    void killingTheMasterFailsOverAndLosesTheFrozenWrite() {
        // a real failover is the point, so it takes real time: down-after 500 ms (instead of 1 s) has the
        // sentinels see the kill sooner; a live master still answers their pings (every 500 ms) in time
        try (RedisSentinelGroup g = RedisSentinelGroup.builder().masterName("failover-test")
                .downAfter(Duration.ofMillis(500)).start()) {
            RedisServer old = g.master();
            List<RedisServer> replicas = g.replicas();
            old.command("SET", "acknowledged", "1");
            g.awaitReplication(REPLICATION_BOUND);
            g.freezeReplication();
            old.command("SET", "lost", "1");

            long start = System.nanoTime();
            assertThat(g.killMaster()).isSameAs(old);
            assertThat(old.isRunning()).isFalse();
            RedisServer promoted = g.awaitFailover(FAILOVER_BOUND);
            Duration took = Duration.ofNanos(System.nanoTime() - start);

            assertThat(took).isLessThan(FAILOVER_BOUND);
            assertThat(promoted).isNotSameAs(old).isIn(replicas);
            assertThat(g.master()).isSameAs(promoted);
            assertThat(TopologySupport.role(promoted)).isEqualTo("master");
            for (RedisServer sentinel : g.sentinels()) {
                assertThat(sentinel.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "failover-test"))
                        .isEqualTo(promoted.host() + "\n" + promoted.port());
            }
            assertThat(promoted.command("GET", "acknowledged")).isEqualTo("1");
            assertThat(promoted.command("GET", "lost")).isNull(); // deterministic loss

            g.thawReplication();
            promoted.command("SET", "after", "1");
            RedisServer other = replicas.get(replicas.get(0) == promoted ? 1 : 0);
            assertThat(g.replicas()).containsExactly(other);
            g.awaitReplication(REPLICATION_BOUND); // the sentinels re-pointed the other replica
            assertThat(replication(other)).containsEntry("master_port", Integer.toString(promoted.port()));
            assertThat(other.command("GET", "after")).isEqualTo("1");
            assertThat(other.command("GET", "lost")).isNull();
            assertThatThrownBy(() -> g.awaitFailover(Duration.ofMillis(200)))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("still name");
        }
    }

    @Test
    void closeStopsEverythingAndBuilderValidates() {
        assertThatThrownBy(() -> RedisSentinelGroup.builder().downAfter(Duration.ZERO).start())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("downAfter");
        assertThatThrownBy(() -> RedisSentinelGroup.builder().failoverTimeout(null).start())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("failoverTimeout");
        assertThatThrownBy(() -> RedisSentinelGroup.builder().masterName("no spaces").start())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RedisSentinelGroup.builder().replicas(0).start())
                .isInstanceOf(IllegalArgumentException.class);

        RedisSentinelGroup small = RedisSentinelGroup.builder().replicas(1).masterName("small").start();
        List<RedisServer> all = new ArrayList<>(small.nodes());
        all.addAll(small.sentinels());
        assertThat(all).hasSize(5).allMatch(RedisServer::isRunning);
        small.close();
        small.close(); // idempotent
        assertThat(all).noneMatch(RedisServer::isRunning).allMatch(s -> !s.dataDir().toFile().exists());
        assertThatThrownBy(small::killMaster).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
    }
}
