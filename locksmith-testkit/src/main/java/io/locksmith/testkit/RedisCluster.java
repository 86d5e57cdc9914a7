package io.locksmith.testkit;

import static io.locksmith.testkit.TopologySupport.PROBE_TIMEOUT;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

/**
 * A real Redis Cluster for tests: three masters owning the slots {@code 0-5460}, {@code 5461-10921} and
 * {@code 10922-16383}, and one replica per master, all {@link RedisServer} processes with
 * {@code cluster-enabled yes} on loopback ports, each with its own temporary directory (holding its
 * {@code nodes.conf}).
 *
 * <h2>Usage</h2>
 * <pre>{@code
 * try (RedisCluster cluster = RedisCluster.start()) {
 *     connectClusterClientTo(cluster.seedUri());             // redis://127.0.0.1:port
 *     RedisServer owner = cluster.masterForSlot(RedisCluster.slot("lock:{order-42}"));
 *     cluster.migrateSlot(slot, owner, otherMaster);           // clients see ASK, then MOVED
 *     cluster.failover(cluster.replicasOf(owner).get(0));      // CLUSTER FAILOVER
 *     cluster.killMaster(owner);
 *     RedisServer promoted = cluster.awaitFailover(Duration.ofSeconds(30));
 * }
 * }</pre>
 *
 * <h2>Creation</h2>
 * The cluster is built with plain commands, no {@code redis-cli}: {@code CLUSTER ADDSLOTS} on each master,
 * distinct {@code CLUSTER SET-CONFIG-EPOCH}s, {@code CLUSTER MEET} from the first node, {@code CLUSTER
 * REPLICATE} on the replicas, and {@link #start()} returns only when every node reports {@code cluster_state:ok},
 * all nodes agree on slot owners and replica roles, and all replication links are up. The operations that
 * change the topology wait for the same condition before returning.
 *
 * <h2>Ports</h2>
 * Redis 6.2 puts the cluster bus on {@code port + 10000} and has no option to change that, so node ports are
 * picked at random between 15000 and 22000 with both ports free (the bus port then stays below the usual
 * ephemeral port range); a node whose port gets taken meanwhile is retried on another pair.
 *
 * <h2>Cleanup</h2>
 * {@link #close()} kills all nodes and deletes their directories; each node is also covered by the
 * {@link RedisServer} shutdown hook.
 *
 * <h2>Thread-safety</h2>
 * Thread-safe: the operations that change the topology ({@link #migrateSlot(int, RedisServer, RedisServer)},
 * {@link #failover(RedisServer)}, {@link #killMaster(RedisServer)}) are serialized on the instance; queries and
 * {@link #awaitFailover(Duration)} may run concurrently from any thread. Every network call and every wait is
 * bounded ({@link Builder#operationTimeout(Duration)}).
 *
 * <h2>Failures</h2>
 * Timeouts and refused operations throw {@link IllegalStateException} describing the last observed state;
 * network failures of single commands surface as {@link UncheckedIOException}; arguments that are not nodes of
 * this cluster or out of range throw {@link IllegalArgumentException}. Only Unix-like systems are supported.
 */
public final class RedisCluster implements AutoCloseable {

    /** The number of hash slots of a Redis Cluster. */
    public static final int SLOTS = 16384;

    private static final int MASTERS = 3;
    private static final int BUS_PORT_OFFSET = 10_000;
    private static final int MIN_PORT = 15_000;
    private static final int MAX_PORT = 22_000;
    private static final int PORT_ATTEMPTS = 10;
    private static final int MIGRATE_BATCH = 100;
    private static final int MIGRATE_TIMEOUT_MILLIS = 5_000;
    private static final Set<String> UNHEALTHY_FLAGS = Set.of("fail", "fail?", "handshake", "noaddr");

    private final Duration nodeTimeout;
    private final Duration operationTimeout;
    private final List<RedisServer> nodes = new ArrayList<>(); // filled by the constructor only
    private final Map<RedisServer, String> ids = new ConcurrentHashMap<>();
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile KilledMaster killed;

    /** What {@link #awaitFailover(Duration)} waits for. */
    private record KilledMaster(RedisServer node, String id, List<RedisServer> replicas) {
    }

    /** One line of {@code CLUSTER NODES}. */
    record NodeEntry(String id, Set<String> flags, String masterId, List<String> slots) {
        boolean isMaster() {
            return flags.contains("master");
        }

        boolean healthy() {
            return Collections.disjoint(flags, UNHEALTHY_FLAGS);
        }

        boolean owns(int slot) {
            for (String range : slots) {
                int dash = range.indexOf('-');
                int first = Integer.parseInt(dash < 0 ? range : range.substring(0, dash));
                int last = dash < 0 ? first : Integer.parseInt(range.substring(dash + 1));
                if (slot >= first && slot <= last) {
                    return true;
                }
            }
            return false;
        }
    }

    private RedisCluster(Builder builder) {
        this.nodeTimeout = builder.nodeTimeout;
        this.operationTimeout = builder.operationTimeout;
        try {
            create(builder);
        } catch (RuntimeException | Error e) {
            close();
            throw e;
        }
    }

    /**
     * Starts a cluster with default settings: 3 masters, 3 replicas, {@code cluster-node-timeout} 2000 ms.
     *
     * @return the running cluster, healthy and agreed on its slot map
     * @throws IllegalStateException if a node does not come up or the cluster is not healthy within 30 s;
     *     everything started so far is cleaned up
     */
    public static RedisCluster start() {
        return builder().start();
    }

    /**
     * Returns a builder for a customized cluster.
     *
     * @return a new builder with default settings
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The hash slot of a key as Redis Cluster computes it: CRC16 (XMODEM) of the key's UTF-8 bytes modulo
     * 16384, where only the part between the first <code>&#123;</code> and the next <code>&#125;</code> is
     * hashed if that part is non-empty (a hash tag: {@code {user1}.a} and {@code {user1}.b} share a slot, while
     * {@code foo{}{bar}} is hashed whole).
     *
     * @param key the key
     * @return the slot, 0..16383
     */
    public static int slot(String key) {
        return slot(key.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * The hash slot of a binary key; see {@link #slot(String)}.
     *
     * @param key the key bytes
     * @return the slot, 0..16383
     */
    public static int slot(byte[] key) {
        int from = 0;
        int to = key.length;
        int open = indexOf(key, (byte) '{', 0);
        if (open >= 0) {
            int close = indexOf(key, (byte) '}', open + 1);
            if (close > open + 1) { // "{}" is not a hash tag: the whole key is hashed
                from = open + 1;
                to = close;
            }
        }
        return crc16(key, from, to) & (SLOTS - 1);
    }

    /** CRC16-CCITT in the XMODEM variant (polynomial 0x1021, initial value 0, no reflection), as Redis uses. */
    static int crc16(byte[] data, int from, int to) {
        int crc = 0;
        for (int i = from; i < to; i++) {
            crc ^= (data[i] & 0xFF) << 8;
            for (int bit = 0; bit < 8; bit++) {
                crc = (crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1;
            }
            crc &= 0xFFFF;
        }
        return crc;
    }

    private static int indexOf(byte[] data, byte b, int from) {
        for (int i = from; i < data.length; i++) {
            if (data[i] == b) {
                return i;
            }
        }
        return -1;
    }

    /**
     * The configured {@code cluster-node-timeout}.
     *
     * @return the node timeout
     */
    public Duration nodeTimeout() {
        return nodeTimeout;
    }

    /**
     * All six nodes, running or not, in creation order: the three initial masters, then their replicas (the
     * replica of {@code nodes().get(i)} is {@code nodes().get(i + 3)} until roles change).
     *
     * @return the nodes (unmodifiable)
     */
    public List<RedisServer> nodes() {
        return Collections.unmodifiableList(nodes);
    }

    /**
     * The running nodes that report {@code role:master} ({@code ROLE}), in creation order.
     *
     * @return the masters
     * @throws IllegalStateException if a node answers with an error
     * @throws UncheckedIOException if a running node cannot be reached
     */
    public List<RedisServer> masters() {
        return byRole("master");
    }

    /**
     * The running nodes that report {@code role:slave} ({@code ROLE}), in creation order.
     *
     * @return the replicas
     * @throws IllegalStateException if a node answers with an error
     * @throws UncheckedIOException if a running node cannot be reached
     */
    public List<RedisServer> replicas() {
        return byRole("slave");
    }

    /**
     * The running replicas replicating from {@code master} (by their own {@code ROLE}).
     *
     * @param master a node of this cluster
     * @return its replicas, possibly empty
     * @throws IllegalArgumentException if {@code master} is not a node of this cluster
     * @throws UncheckedIOException if a running node cannot be reached
     */
    public List<RedisServer> replicasOf(RedisServer master) {
        requireNode(master);
        List<RedisServer> replicas = new ArrayList<>();
        for (RedisServer node : nodes) {
            if (node == master || !node.isRunning()) {
                continue;
            }
            List<?> role = TopologySupport.list(TopologySupport.call(node, PROBE_TIMEOUT, "ROLE"));
            if (role.size() >= 3 && "slave".equals(String.valueOf(role.get(0)))
                    && String.valueOf(master.port()).equals(String.valueOf(role.get(2)))) {
                replicas.add(node);
            }
        }
        return replicas;
    }

    /**
     * The cluster node id of a node ({@code CLUSTER MYID}), stable across roles and restarts.
     *
     * @param node a node of this cluster
     * @return the 40-character node id
     * @throws IllegalArgumentException if {@code node} is not a node of this cluster
     */
    public String nodeId(RedisServer node) {
        requireNode(node);
        return ids.get(node);
    }

    /**
     * The URIs of all running nodes ({@code redis://127.0.0.1:port}), in creation order; any of them works as a
     * cluster seed.
     *
     * @return the URIs
     */
    public List<String> uris() {
        List<String> uris = new ArrayList<>();
        for (RedisServer node : nodes) {
            if (node.isRunning()) {
                uris.add(node.uri());
            }
        }
        return uris;
    }

    /**
     * A seed URI for cluster clients: the URI of the first running node.
     *
     * @return e.g. {@code redis://127.0.0.1:15001}
     * @throws IllegalStateException if no node is running
     */
    public String seedUri() {
        return firstRunning().uri();
    }

    /**
     * The master owning {@code slot} as currently seen by the first running node ({@code CLUSTER NODES}).
     * Right after {@link #killMaster(RedisServer)} this may still be the killed node until the failover.
     *
     * @param slot 0..16383
     * @return the owning master
     * @throws IllegalArgumentException if the slot is out of range
     * @throws IllegalStateException if no running node knows an owner that belongs to this cluster
     * @throws UncheckedIOException if the node cannot be reached
     */
    public RedisServer masterForSlot(int slot) {
        requireSlot(slot);
        Map<String, NodeEntry> view = view(firstRunning());
        for (NodeEntry entry : view.values()) {
            if (entry.isMaster() && entry.owns(slot)) {
                return nodeById(entry.id());
            }
        }
        throw new IllegalStateException("no master owns slot " + slot);
    }

    /**
     * Moves a slot and its keys from one master to another with the same steps as a resharding tool:
     * {@code CLUSTER SETSLOT IMPORTING} on the target, {@code MIGRATING} on the source, {@code MIGRATE ... KEYS}
     * in batches of 100 until {@code CLUSTER GETKEYSINSLOT} is empty, then {@code CLUSTER SETSLOT NODE} on the
     * target, the source and the other masters. While it runs, the source answers {@code -ASK} for keys already
     * moved; afterwards it answers {@code -MOVED}. Returns once all nodes agree on the new owner and are healthy.
     *
     * @param slot 0..16383
     * @param from the master owning the slot
     * @param to another master
     * @throws IllegalArgumentException if the slot is out of range, or {@code from}/{@code to} are not distinct
     *     nodes of this cluster
     * @throws IllegalStateException if {@code from} does not own the slot, {@code to} is not a master, a command
     *     is refused, or the cluster does not agree within the operation timeout
     * @throws UncheckedIOException if a node cannot be reached
     */
    public void migrateSlot(int slot, RedisServer from, RedisServer to) {
        migrateSlot(slot, from, to, () -> { });
    }

    /**
     * Like {@link #migrateSlot(int, RedisServer, RedisServer)}, running {@code whileMigrating} at the point
     * where all keys of the slot have been moved to the target but the slot still belongs to the source: the
     * source answers {@code -ASK} for every key of the slot, and the target serves them only to connections that
     * sent {@code ASKING}. The migration is completed even if the callback throws (its exception or error is
     * rethrown afterwards, with a failure to complete attached as suppressed).
     *
     * @param slot 0..16383
     * @param from the master owning the slot
     * @param to another master
     * @param whileMigrating runs on the calling thread in the middle of the migration
     * @throws IllegalArgumentException as {@link #migrateSlot(int, RedisServer, RedisServer)}
     * @throws IllegalStateException as {@link #migrateSlot(int, RedisServer, RedisServer)}
     * @throws UncheckedIOException if a node cannot be reached
     */
    public synchronized void migrateSlot(int slot, RedisServer from, RedisServer to, Runnable whileMigrating) {
        ensureOpen();
        requireSlot(slot);
        requireNode(from);
        requireNode(to);
        Objects.requireNonNull(whileMigrating, "whileMigrating");
        if (from == to) {
            throw new IllegalArgumentException("source and target are the same node: " + from);
        }
        if (masterForSlot(slot) != from) {
            throw new IllegalStateException("slot " + slot + " belongs to " + masterForSlot(slot) + ", not " + from);
        }
        if (!"master".equals(TopologySupport.role(to))) {
            throw new IllegalStateException("the target " + to + " is not a master");
        }
        String s = Integer.toString(slot);
        String fromId = ids.get(from);
        String toId = ids.get(to);
        to.command("CLUSTER", "SETSLOT", s, "IMPORTING", fromId);
        from.command("CLUSTER", "SETSLOT", s, "MIGRATING", toId);
        while (true) {
            List<?> keys = TopologySupport.list(TopologySupport.call(from, PROBE_TIMEOUT,
                    "CLUSTER", "GETKEYSINSLOT", s, Integer.toString(MIGRATE_BATCH)));
            if (keys.isEmpty()) {
                break;
            }
            List<String> migrate = new ArrayList<>(List.of("MIGRATE", to.host(), Integer.toString(to.port()), "",
                    "0", Integer.toString(MIGRATE_TIMEOUT_MILLIS), "KEYS"));
            for (Object key : keys) {
                migrate.add(String.valueOf(key));
            }
            TopologySupport.call(from, Duration.ofMillis(2L * MIGRATE_TIMEOUT_MILLIS), migrate.toArray(new String[0]));
        }
        Throwable callbackFailure = null;
        try {
            whileMigrating.run();
        } catch (RuntimeException | Error e) { // e.g. a failed assertion: still leave the cluster consistent
            callbackFailure = e;
        }
        try {
            // Target first: it bumps its config epoch so the new owner wins over any stale claim in gossip.
            to.command("CLUSTER", "SETSLOT", s, "NODE", toId);
            from.command("CLUSTER", "SETSLOT", s, "NODE", toId);
            for (RedisServer master : masters()) {
                if (master != from && master != to) {
                    master.command("CLUSTER", "SETSLOT", s, "NODE", toId);
                }
            }
            awaitHealthy("all nodes to see slot " + slot + " on " + to, operationTimeout, view -> {
                NodeEntry entry = view.get(toId);
                return entry != null && entry.isMaster() && entry.owns(slot) ? null : "slot not yet on the target";
            });
        } catch (RuntimeException e) {
            if (callbackFailure != null) {
                callbackFailure.addSuppressed(e);
            } else {
                throw e;
            }
        }
        if (callbackFailure instanceof Error error) {
            throw error;
        }
        if (callbackFailure != null) {
            throw (RuntimeException) callbackFailure;
        }
    }

    /**
     * Promotes a replica with a coordinated manual failover ({@code CLUSTER FAILOVER}): its master stops
     * accepting writes, the replica catches up, wins the election and takes over the slots; the old master
     * becomes its replica. Returns once the replica reports {@code role:master} and the cluster is healthy and
     * agreed.
     *
     * @param replica a running replica of this cluster
     * @throws IllegalArgumentException if it is not a node of this cluster
     * @throws IllegalStateException if it is not a running replica, the command is refused, or the failover does
     *     not complete within the operation timeout
     * @throws UncheckedIOException if the replica cannot be reached
     */
    public synchronized void failover(RedisServer replica) {
        ensureOpen();
        requireNode(replica);
        if (!replica.isRunning() || !"slave".equals(TopologySupport.role(replica))) {
            throw new IllegalStateException(replica + " is not a running replica");
        }
        String id = ids.get(replica);
        replica.command("CLUSTER", "FAILOVER");
        awaitHealthy("manual failover to " + replica, operationTimeout, view -> {
            NodeEntry entry = view.get(id);
            if (entry == null || !entry.isMaster() || entry.slots().isEmpty()) {
                return "not yet a master with slots in the cluster's view";
            }
            return "master".equals(TopologySupport.role(replica)) ? null : "does not report role master yet";
        });
    }

    /**
     * Kills a master with {@code SIGKILL}; its replica takes over after about {@code cluster-node-timeout} plus
     * an election (see {@link #awaitFailover(Duration)}). The killed node stays down.
     *
     * @param master a running master of this cluster owning slots
     * @throws IllegalArgumentException if it is not a node of this cluster
     * @throws IllegalStateException if it is not a running master owning slots
     * @throws UncheckedIOException if the cluster cannot be asked for its topology
     */
    public synchronized void killMaster(RedisServer master) {
        ensureOpen();
        requireNode(master);
        if (!master.isRunning() || !"master".equals(TopologySupport.role(master))) {
            throw new IllegalStateException(master + " is not a running master");
        }
        String id = ids.get(master);
        NodeEntry entry = view(master).get(id);
        if (entry == null || entry.slots().isEmpty()) {
            throw new IllegalStateException(master + " owns no slots");
        }
        List<RedisServer> replicas = replicasOf(master);
        killed = new KilledMaster(master, id, List.copyOf(replicas));
        master.kill();
    }

    /**
     * Waits until a former replica of the master last {@linkplain #killMaster(RedisServer) killed} has been
     * promoted: it reports {@code role:master}, owns slots in every running node's view, every running node
     * reports {@code cluster_state:ok} and all agree on the slot map.
     *
     * @param timeout how long to wait
     * @return the promoted replica
     * @throws IllegalStateException if no master was killed, the killed master had no replica, or on timeout
     *     (the message describes the last observed state)
     */
    public RedisServer awaitFailover(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        KilledMaster k = killed;
        if (k == null) {
            throw new IllegalStateException("no master was killed with killMaster()");
        }
        if (k.replicas().isEmpty()) {
            throw new IllegalStateException("the killed master " + k.node() + " had no replica to fail over to");
        }
        RedisServer[] promoted = new RedisServer[1];
        awaitHealthy("a replica of " + k.node() + " to take over", timeout, view -> {
            for (RedisServer replica : k.replicas()) {
                NodeEntry entry = view.get(ids.get(replica));
                if (replica.isRunning() && entry != null && entry.isMaster() && !entry.slots().isEmpty()
                        && "master".equals(TopologySupport.role(replica))) {
                    promoted[0] = replica;
                    return null;
                }
            }
            return "no replica of the killed master is a master yet";
        });
        killed = null;
        return promoted[0];
    }

    /**
     * Kills all nodes and deletes their directories. Idempotent; never throws.
     */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            TopologySupport.closeAll(nodes);
        }
    }

    @Override
    public String toString() {
        List<String> described = new ArrayList<>();
        for (RedisServer node : nodes) {
            described.add(node.port() + (node.isRunning() ? "" : " (down)"));
        }
        return "RedisCluster[nodes " + described + (closed.get() ? ", closed" : "") + "]";
    }

    // ---------------------------------------------------------------------------------------------------------

    private void create(Builder builder) {
        long deadline = System.nanoTime() + builder.startupTimeout.toNanos();
        for (int i = 0; i < 2 * MASTERS; i++) {
            RedisServer node = startNode(builder);
            nodes.add(node);
            ids.put(node, node.command("CLUSTER", "MYID"));
        }
        for (int i = 0; i < MASTERS; i++) {
            int first = i * SLOTS / MASTERS;
            int last = (i + 1) * SLOTS / MASTERS - 1;
            List<String> addSlots = new ArrayList<>(List.of("CLUSTER", "ADDSLOTS"));
            for (int slot = first; slot <= last; slot++) {
                addSlots.add(Integer.toString(slot));
            }
            nodes.get(i).command(addSlots.toArray(new String[0]));
        }
        // Distinct epochs before meeting, so that no epoch collision has to be resolved (slowly) by gossip.
        for (int i = 0; i < nodes.size(); i++) {
            nodes.get(i).command("CLUSTER", "SET-CONFIG-EPOCH", Integer.toString(i + 1));
        }
        // Every pair meets directly: with one node meeting all the others, the others learnt of each other
        // only by gossip, which took 1-3 s of the start
        for (int i = 0; i < nodes.size(); i++) {
            for (RedisServer node : nodes.subList(i + 1, nodes.size())) {
                nodes.get(i).command("CLUSTER", "MEET", node.host(), Integer.toString(node.port()));
            }
        }
        // CLUSTER REPLICATE needs the replica to know its master: wait for every handshake to complete.
        TopologySupport.await("all nodes to know each other", TopologySupport.remaining(deadline), () -> {
            for (RedisServer node : nodes) {
                Map<String, NodeEntry> view = view(node);
                for (RedisServer other : nodes) {
                    NodeEntry entry = view.get(ids.get(other));
                    if (entry == null || entry.flags().contains("handshake") || entry.flags().contains("noaddr")) {
                        throw new TopologySupport.NotYet(node + " does not know " + other + " yet");
                    }
                }
            }
            return Boolean.TRUE;
        });
        for (int i = 0; i < MASTERS; i++) {
            nodes.get(MASTERS + i).command("CLUSTER", "REPLICATE", ids.get(nodes.get(i)));
        }
        awaitHealthy("the new cluster to become ready", TopologySupport.remaining(deadline), view -> {
            for (int i = 0; i < MASTERS; i++) {
                NodeEntry replica = view.get(ids.get(nodes.get(MASTERS + i)));
                if (replica == null || !ids.get(nodes.get(i)).equals(replica.masterId())) {
                    return nodes.get(MASTERS + i) + " is not yet seen as replica of " + nodes.get(i);
                }
            }
            return null;
        });
    }

    private RedisServer startNode(Builder builder) {
        IllegalStateException last = null;
        for (int attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
            RedisServer.Builder node = RedisServer.builder()
                    .port(freePortPair())
                    .extraArgs("--cluster-enabled", "yes",
                            "--cluster-config-file", "nodes.conf", // relative to the node's own --dir
                            "--cluster-node-timeout", Long.toString(nodeTimeout.toMillis()),
                            // always let a replica take over, however long its link was down
                            "--cluster-replica-validity-factor", "0");
            if (builder.binary != null) {
                node.binary(builder.binary);
            }
            try {
                return node.start();
            } catch (IllegalStateException e) {
                if (!String.valueOf(e.getMessage()).contains("Address already in use")) {
                    throw e;
                }
                last = e; // the data or the bus port was taken between probing and binding
            }
        }
        throw last;
    }

    /** A port p with p and p + 10000 both free on 127.0.0.1 right now. */
    private static int freePortPair() {
        for (int attempt = 0; attempt < 100; attempt++) {
            int port = ThreadLocalRandom.current().nextInt(MIN_PORT, MAX_PORT);
            if (isFree(port) && isFree(port + BUS_PORT_OFFSET)) {
                return port;
            }
        }
        throw new IllegalStateException("no free port pair (p, p+" + BUS_PORT_OFFSET + ") found between "
                + MIN_PORT + " and " + MAX_PORT);
    }

    private static boolean isFree(int port) {
        try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getByName("127.0.0.1"))) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Waits until every running node reports {@code cluster_state:ok}, knows every running node as healthy,
     * all running nodes agree on slot owners and replica roles, every running replica's link is up, and
     * {@code extra} (given the agreed view) returns null instead of a reason to keep waiting.
     */
    private Map<String, NodeEntry> awaitHealthy(String what, Duration timeout,
            Function<Map<String, NodeEntry>, String> extra) {
        return TopologySupport.await(what, timeout, () -> {
            List<RedisServer> running = new ArrayList<>();
            Set<String> runningIds = new HashSet<>();
            for (RedisServer node : nodes) {
                if (node.isRunning()) {
                    running.add(node);
                    runningIds.add(ids.get(node));
                }
            }
            String agreed = null;
            Map<String, NodeEntry> agreedView = null;
            for (RedisServer node : running) {
                Map<String, String> info = TopologySupport.parseInfo(node.command(PROBE_TIMEOUT, "CLUSTER", "INFO"));
                if (!"ok".equals(info.get("cluster_state"))) {
                    throw new TopologySupport.NotYet(node + " reports cluster_state " + info.get("cluster_state"));
                }
                Map<String, NodeEntry> view = view(node);
                StringBuilder canonical = new StringBuilder();
                for (String id : new TreeSet<>(runningIds)) {
                    NodeEntry entry = view.get(id);
                    if (entry == null || !entry.healthy()) {
                        throw new TopologySupport.NotYet(node + " sees " + nodeById(id) + " as "
                                + (entry == null ? "unknown" : entry.flags()));
                    }
                    canonical.append(id).append(entry.isMaster() ? " master " + entry.slots()
                            : " replica of " + entry.masterId()).append('\n');
                }
                if (agreed == null) {
                    agreed = canonical.toString();
                    agreedView = view;
                } else if (!agreed.contentEquals(canonical)) {
                    throw new TopologySupport.NotYet("nodes disagree:\n" + agreed + "vs the view of " + node + ":\n"
                            + canonical);
                }
            }
            if (agreedView == null) {
                throw new TopologySupport.NotYet("no node is running");
            }
            for (RedisServer node : running) {
                if (!agreedView.get(ids.get(node)).isMaster()) {
                    String link = TopologySupport.info(node, "replication").get("master_link_status");
                    if (!"up".equals(link)) {
                        throw new TopologySupport.NotYet(node + " has its master link " + link);
                    }
                }
            }
            String reason = extra.apply(agreedView);
            if (reason != null) {
                throw new TopologySupport.NotYet(reason);
            }
            return agreedView;
        });
    }

    /** A node's {@code CLUSTER NODES}, by node id; importing/migrating markers are left out of the slots. */
    private static Map<String, NodeEntry> view(RedisServer node) {
        return parseNodes(node.command(PROBE_TIMEOUT, "CLUSTER", "NODES"));
    }

    static Map<String, NodeEntry> parseNodes(String text) {
        Map<String, NodeEntry> view = new LinkedHashMap<>();
        for (String line : text.split("\\R")) {
            String[] fields = line.trim().split(" ");
            if (fields.length < 8) {
                continue;
            }
            List<String> slots = new ArrayList<>();
            for (int i = 8; i < fields.length; i++) {
                if (!fields[i].startsWith("[")) {
                    slots.add(fields[i]);
                }
            }
            view.put(fields[0], new NodeEntry(fields[0], Set.of(fields[2].split(",")), fields[3],
                    List.copyOf(slots)));
        }
        return view;
    }

    private List<RedisServer> byRole(String role) {
        List<RedisServer> result = new ArrayList<>();
        for (RedisServer node : nodes) {
            if (node.isRunning() && role.equals(TopologySupport.role(node))) {
                result.add(node);
            }
        }
        return result;
    }

    private RedisServer firstRunning() {
        for (RedisServer node : nodes) {
            if (node.isRunning()) {
                return node;
            }
        }
        throw new IllegalStateException("no node of " + this + " is running");
    }

    private RedisServer nodeById(String id) {
        for (Map.Entry<RedisServer, String> entry : ids.entrySet()) {
            if (entry.getValue().equals(id)) {
                return entry.getKey();
            }
        }
        throw new IllegalStateException("node id " + id + " is not a node of " + this);
    }

    private void requireNode(RedisServer node) {
        Objects.requireNonNull(node, "node");
        if (!ids.containsKey(node)) {
            throw new IllegalArgumentException(node + " is not a node of " + this);
        }
    }

    private static void requireSlot(int slot) {
        if (slot < 0 || slot >= SLOTS) {
            throw new IllegalArgumentException("slot out of range 0..16383: " + slot);
        }
    }

    private void ensureOpen() {
        if (closed.get()) {
            throw new IllegalStateException("the cluster was closed");
        }
    }

    /**
     * Configures and starts a {@link RedisCluster}. Not thread-safe; use one builder per cluster. Values are
     * validated by {@link #start()}.
     */
    public static final class Builder {
        private Duration nodeTimeout = Duration.ofMillis(2000);
        private Duration startupTimeout = Duration.ofSeconds(30);
        private Duration operationTimeout = Duration.ofSeconds(30);
        private Path binary;

        private Builder() {
        }

        /**
         * {@code cluster-node-timeout}: how long a node may be unreachable before it is considered failing;
         * default 2000 ms. A killed master is replaced after roughly this plus one to two seconds.
         *
         * @param nodeTimeout at least 1 ms
         * @return this builder
         */
        public Builder nodeTimeout(Duration nodeTimeout) {
            this.nodeTimeout = nodeTimeout;
            return this;
        }

        /**
         * How long {@link #start()} waits for the cluster to become healthy; default 30 s.
         *
         * @param startupTimeout at least 1 ms
         * @return this builder
         */
        public Builder startupTimeout(Duration startupTimeout) {
            this.startupTimeout = startupTimeout;
            return this;
        }

        /**
         * How long {@link RedisCluster#migrateSlot(int, RedisServer, RedisServer)} and
         * {@link RedisCluster#failover(RedisServer)} wait for the cluster to agree again; default 30 s.
         *
         * @param operationTimeout at least 1 ms
         * @return this builder
         */
        public Builder operationTimeout(Duration operationTimeout) {
            this.operationTimeout = operationTimeout;
            return this;
        }

        /**
         * Uses this binary for all nodes instead of {@link RedisServer#binary()}.
         *
         * @param binary an executable {@code redis-server}
         * @return this builder
         */
        public Builder binary(Path binary) {
            this.binary = Objects.requireNonNull(binary, "binary");
            return this;
        }

        /**
         * Validates the settings, starts six nodes and builds the cluster.
         *
         * @return the running cluster, healthy and agreed on its slot map
         * @throws IllegalArgumentException if a setting is invalid (nothing is started then)
         * @throws IllegalStateException if a node does not come up or the cluster is not healthy within the
         *     startup timeout; everything started so far is cleaned up
         */
        public RedisCluster start() {
            TopologySupport.requireMillis("nodeTimeout", nodeTimeout);
            TopologySupport.requireMillis("startupTimeout", startupTimeout);
            TopologySupport.requireMillis("operationTimeout", operationTimeout);
            return new RedisCluster(this);
        }
    }
}
