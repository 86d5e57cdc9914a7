package io.locksmith.testkit;

import static io.locksmith.testkit.TopologySupport.PROBE_TIMEOUT;

import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;

/**
 * A real Redis Sentinel deployment for tests: one master, {@linkplain Builder#replicas(int) two replicas} and
 * three sentinels (quorum 2) monitoring the master under a {@linkplain #masterName() name}, all of them
 * {@link RedisServer} processes on free loopback ports with their own temporary directories.
 *
 * <h2>Usage</h2>
 * <pre>{@code
 * try (RedisSentinelGroup group = RedisSentinelGroup.start()) {
 *     connectClientTo(group.sentinelUri());      // redis-sentinel://127.0.0.1:p1,...?sentinelMasterId=locksmith
 *     group.master().command("SET", "k", "v");
 *     group.awaitReplication(Duration.ofSeconds(5));
 *     RedisServer old = group.killMaster();
 *     RedisServer promoted = group.awaitFailover(Duration.ofSeconds(30));
 * }
 * }</pre>
 *
 * <h2>Timings</h2>
 * Defaults are short but tolerant of a loaded CI machine: {@code down-after-milliseconds} 1000 ms and
 * {@code failover-timeout} 3000 ms; a failover after {@link #killMaster()} usually completes in 3 to 6 s. A
 * failed leader election (rare) costs another {@code 2 × failover-timeout} before the sentinels retry.
 *
 * <h2>Freezing replication</h2>
 * {@link #freezeReplication()} makes sure that writes to the master do not reach the replicas, e.g. to lose an
 * acknowledged write deterministically: freeze, write, {@link #killMaster()}, {@link #awaitFailover(Duration)}.
 * Replicas authenticate to their master as a dedicated ACL user ({@code masteruser}/{@code masterauth}); the
 * freeze disables that user on the current master and kills its replica connections, so the replicas keep
 * failing to log in again until {@link #thawReplication()}. Everybody else (sentinels, clients) keeps using
 * the real master address, unaffected. (Replicating through a {@link TcpProxy} does not work with Sentinel:
 * a sentinel notices that a replica's master address differs from the monitored one and points the replica
 * back at the real master, {@code +fix-slave-config}, a few seconds after discovering it.)
 * Keep a freeze shorter than {@code 10 × down-after-milliseconds} before killing the master: Sentinel does not
 * promote replicas whose link has been down for longer.
 *
 * <h2>Cleanup</h2>
 * {@link #close()} kills all processes and deletes their directories. Each process is also covered by the
 * {@link RedisServer} shutdown hook.
 *
 * <h2>Thread-safety</h2>
 * Thread-safe: the fault methods ({@link #killMaster()}, {@link #freezeReplication()},
 * {@link #thawReplication()}) are serialized on the instance; queries and waits may run concurrently from any
 * thread. Every network call and every wait is bounded.
 *
 * <h2>Failures</h2>
 * Start-up failures and timeouts of the {@code await...} methods throw {@link IllegalStateException} with a
 * description of the last observed state; network failures of single commands surface as
 * {@link java.io.UncheckedIOException}. Requires Redis 6.0 or later (ACL users); only Unix-like systems are
 * supported.
 */
public final class RedisSentinelGroup implements AutoCloseable {

    /** The master name used unless {@link Builder#masterName(String)} says otherwise. */
    public static final String DEFAULT_MASTER_NAME = "locksmith";

    static final String REPLICATION_USER = "locksmith-replication";
    private static final int SENTINELS = 3;
    private static final int QUORUM = 2;
    private static final Pattern MASTER_NAME = Pattern.compile("[A-Za-z0-9._-]{1,64}");

    private final String masterName;
    private final Duration downAfter;
    private final Duration failoverTimeout;
    private final String replicationPassword;
    private final List<RedisServer> nodes = new ArrayList<>(); // filled by the constructor only
    private final List<RedisServer> sentinels = new ArrayList<>(); // filled by the constructor only
    private final AtomicBoolean closed = new AtomicBoolean();

    /** The master that {@link #awaitFailover(Duration)} must see replaced. */
    private volatile RedisServer masterOfRecord;
    private volatile boolean frozen;

    private RedisSentinelGroup(Builder builder) {
        this.masterName = builder.masterName;
        this.downAfter = builder.downAfter;
        this.failoverTimeout = builder.failoverTimeout;
        byte[] secret = new byte[16];
        new SecureRandom().nextBytes(secret);
        this.replicationPassword = HexFormat.of().formatHex(secret);
        try {
            launch(builder);
        } catch (RuntimeException | Error e) {
            close();
            throw e;
        }
    }

    /**
     * Starts a group with default settings: master name {@value #DEFAULT_MASTER_NAME}, 2 replicas, 3 sentinels
     * with quorum 2, {@code down-after-milliseconds} 1000, {@code failover-timeout} 3000.
     *
     * @return the running group, with every sentinel knowing the replicas and the other sentinels
     * @throws IllegalStateException if a process does not come up or the group is not ready within 30 s;
     *     everything started so far is cleaned up
     */
    public static RedisSentinelGroup start() {
        return builder().start();
    }

    /**
     * Returns a builder for a customized group.
     *
     * @return a new builder with default settings
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The name under which the sentinels monitor the master ({@code sentinelMasterId} for clients).
     *
     * @return the master name
     */
    public String masterName() {
        return masterName;
    }

    /**
     * The configured {@code down-after-milliseconds}.
     *
     * @return the duration after which an unresponsive master is considered down by a sentinel
     */
    public Duration downAfter() {
        return downAfter;
    }

    /**
     * The configured {@code failover-timeout}.
     *
     * @return the failover timeout
     */
    public Duration failoverTimeout() {
        return failoverTimeout;
    }

    /**
     * The current master as reported by the sentinels ({@code SENTINEL GET-MASTER-ADDR-BY-NAME}): the address
     * reported by most running sentinels, the first sentinel's answer winning ties. Right after
     * {@link #killMaster()} this is still the killed node until the sentinels have failed over.
     *
     * @return the master node
     * @throws IllegalStateException if no sentinel answers, or they name an address that is not a node of
     *     this group
     */
    public RedisServer master() {
        Map<Integer, Integer> votes = new LinkedHashMap<>();
        RuntimeException failure = null;
        for (RedisServer sentinel : sentinels) {
            if (!sentinel.isRunning() || sentinel.isPaused()) {
                continue;
            }
            try {
                RedisServer reported = reportedMaster(sentinel);
                if (reported != null) {
                    votes.merge(reported.port(), 1, Integer::sum);
                }
            } catch (RuntimeException e) {
                failure = e;
            }
        }
        int bestPort = -1;
        int best = 0;
        for (Map.Entry<Integer, Integer> vote : votes.entrySet()) {
            if (vote.getValue() > best) {
                best = vote.getValue();
                bestPort = vote.getKey();
            }
        }
        if (bestPort < 0) {
            throw new IllegalStateException("no sentinel reported a master for " + masterName, failure);
        }
        return nodeByPort(bestPort);
    }

    /**
     * The running data nodes other than {@link #master()}, in start order. After a failover this includes the
     * replicas that the sentinels re-pointed at the new master (they may still be syncing; see
     * {@link #awaitReplication(Duration)}) and excludes a killed old master.
     *
     * @return the replicas
     * @throws IllegalStateException as {@link #master()}
     */
    public List<RedisServer> replicas() {
        RedisServer master = master();
        List<RedisServer> replicas = new ArrayList<>();
        for (RedisServer node : nodes) {
            if (node != master && node.isRunning()) {
                replicas.add(node);
            }
        }
        return replicas;
    }

    /**
     * All data nodes, running or not, in start order: the initial master first, then the replicas.
     *
     * @return the data nodes (unmodifiable)
     */
    public List<RedisServer> nodes() {
        return Collections.unmodifiableList(nodes);
    }

    /**
     * The three sentinel processes, e.g. for {@code sentinels().get(0).command("SENTINEL", "MASTER", name)} or
     * to kill or pause one (quorum 2 still fails over with one sentinel missing).
     *
     * @return the sentinels (unmodifiable)
     */
    public List<RedisServer> sentinels() {
        return Collections.unmodifiableList(sentinels);
    }

    /**
     * A Lettuce Sentinel URI listing all sentinels:
     * {@code redis-sentinel://127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3?sentinelMasterId=<name>}.
     *
     * @return the URI
     */
    public String sentinelUri() {
        StringBuilder uri = new StringBuilder("redis-sentinel://");
        for (int i = 0; i < sentinels.size(); i++) {
            RedisServer sentinel = sentinels.get(i);
            if (i > 0) {
                uri.append(',');
            }
            uri.append(sentinel.host()).append(':').append(sentinel.port());
        }
        return uri.append("?sentinelMasterId=").append(masterName).toString();
    }

    /**
     * Waits until every {@linkplain #replicas() replica} replicates from the current master with its link up
     * and has processed the master's replication stream up to the master's offset at the time of the call
     * ({@code master_repl_offset} vs the replica's {@code slave_repl_offset}). Everything written to the master
     * before this call is then on all replicas. Times out while replication is {@linkplain #freezeReplication()
     * frozen}.
     *
     * @param timeout how long to wait
     * @throws IllegalStateException on timeout (the message names the lagging replica), or as {@link #master()}
     * @throws java.io.UncheckedIOException if the master cannot be asked for its offset
     */
    public void awaitReplication(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        RedisServer master = master();
        long target = Long.parseLong(TopologySupport.info(master, "replication").get("master_repl_offset"));
        List<RedisServer> replicas = replicas();
        TopologySupport.await("replicas " + replicas + " to reach offset " + target + " of " + master, timeout,
                () -> {
                    for (RedisServer replica : replicas) {
                        Map<String, String> info = TopologySupport.info(replica, "replication");
                        if (!"slave".equals(info.get("role"))
                                || !String.valueOf(master.port()).equals(info.get("master_port"))) {
                            throw new TopologySupport.NotYet(replica + " replicates from port "
                                    + info.get("master_port") + " (role " + info.get("role") + ")");
                        }
                        if (!"up".equals(info.get("master_link_status"))) {
                            throw new TopologySupport.NotYet(replica + " master link is "
                                    + info.get("master_link_status"));
                        }
                        long offset = Long.parseLong(info.getOrDefault("slave_repl_offset", "-1"));
                        if (offset < target) {
                            throw new TopologySupport.NotYet(replica + " is at offset " + offset);
                        }
                    }
                    return Boolean.TRUE;
                });
    }

    /**
     * Points every running data node other than the current {@linkplain #master() master} at the master
     * ({@code REPLICAOF}) when it replicates from anywhere else or is a master itself, as the sentinels would
     * with {@code +fix-slave-config} and {@code +convert-to-slave}. For test set-up after failovers: on a
     * loaded machine the sentinels were seen to leave a replica following another replica (a restarted old
     * master) for more than 90 s.
     *
     * @return the nodes that were re-pointed
     * @throws IllegalStateException if the group was closed, or as {@link #master()}
     * @throws java.io.UncheckedIOException if a node cannot be asked or told
     */
    public synchronized List<RedisServer> repointReplicas() {
        ensureOpen();
        RedisServer master = master();
        List<RedisServer> repointed = new ArrayList<>();
        for (RedisServer node : replicas()) {
            Map<String, String> info = TopologySupport.info(node, "replication");
            if (!"slave".equals(info.get("role")) || !String.valueOf(master.port()).equals(info.get("master_port"))) {
                node.command("REPLICAOF", master.host(), Integer.toString(master.port()));
                repointed.add(node);
            }
        }
        return repointed;
    }

    /**
     * Kills the current {@linkplain #master() master} with {@code SIGKILL} (nothing more reaches the replicas)
     * and remembers it as the master that {@link #awaitFailover(Duration)} waits to see replaced. The killed
     * node stays down.
     *
     * @return the killed node
     * @throws IllegalStateException if the group was closed, the master is not running (e.g. killed already
     *     and not yet failed over), or as {@link #master()}
     */
    public synchronized RedisServer killMaster() {
        ensureOpen();
        RedisServer master = master();
        if (!master.isRunning()) {
            throw new IllegalStateException("the master " + master + " is not running; await the failover first");
        }
        masterOfRecord = master;
        master.kill();
        return master;
    }

    /**
     * Waits until all running sentinels name the same master, different from the last master of record (the
     * one {@linkplain #killMaster() killed}, or the previous result of this method, or the initial master), and
     * that node reports {@code role:master}. Replicas may still be re-syncing with it; use
     * {@link #awaitReplication(Duration)} for that.
     *
     * @param timeout how long to wait
     * @return the new master
     * @throws IllegalStateException on timeout (the message describes what the sentinels reported last)
     */
    public RedisServer awaitFailover(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        RedisServer previous = masterOfRecord;
        RedisServer next = TopologySupport.await("the sentinels to fail over from " + previous, timeout, () -> {
            RedisServer agreed = null;
            for (RedisServer sentinel : sentinels) {
                if (!sentinel.isRunning() || sentinel.isPaused()) {
                    continue;
                }
                RedisServer reported = reportedMaster(sentinel);
                if (reported == null) {
                    throw new TopologySupport.NotYet(sentinel + " reports no master");
                }
                if (agreed == null) {
                    agreed = reported;
                } else if (agreed != reported) {
                    throw new TopologySupport.NotYet("sentinels disagree: " + agreed + " vs " + reported);
                }
            }
            if (agreed == null) {
                throw new TopologySupport.NotYet("no sentinel is running");
            }
            if (agreed == previous) {
                throw new TopologySupport.NotYet("the sentinels still name " + previous);
            }
            if (!agreed.isRunning() || !"master".equals(TopologySupport.role(agreed))) {
                throw new TopologySupport.NotYet(agreed + " does not report role master yet");
            }
            return agreed;
        });
        masterOfRecord = next;
        return next;
    }

    /**
     * Cuts replication from the current master: from now on nothing written to it reaches any replica, until
     * {@link #thawReplication()} (or until a failover makes another node master, whose replication is not
     * frozen). Sentinels and clients are unaffected. Implementation: the replicas' ACL user is disabled on the
     * master and the replica connections are killed; replicas keep retrying and fail to authenticate.
     * Idempotent.
     *
     * @throws IllegalStateException if the group was closed, a command is refused, or the replica connections
     *     are not gone within 5 s
     * @throws java.io.UncheckedIOException if the master cannot be reached
     */
    public synchronized void freezeReplication() {
        ensureOpen();
        RedisServer master = master();
        // Disable the user before killing the links, so no replica can log in again in between.
        master.command("ACL", "SETUSER", REPLICATION_USER, "off");
        frozen = true;
        master.command("CLIENT", "KILL", "TYPE", "replica");
        TopologySupport.await("replica connections of " + master + " to close", Duration.ofSeconds(5), () -> {
            String connected = TopologySupport.info(master, "replication").get("connected_slaves");
            return "0".equals(connected) ? Boolean.TRUE : null;
        });
    }

    /**
     * Lets replication flow again: re-enables the replicas' ACL user on every running data node. Replicas
     * reconnect within about a second and catch up with a partial resync; use
     * {@link #awaitReplication(Duration)} to wait for that. No-op if not frozen.
     *
     * @throws IllegalStateException if the group was closed or a node refuses the command
     * @throws java.io.UncheckedIOException if a running node cannot be reached (all others are still thawed)
     */
    public synchronized void thawReplication() {
        ensureOpen();
        if (!frozen) {
            return;
        }
        RuntimeException failure = null;
        for (RedisServer node : nodes) {
            if (!node.isRunning()) {
                continue;
            }
            try {
                node.command("ACL", "SETUSER", REPLICATION_USER, "on");
            } catch (RuntimeException e) {
                failure = e;
            }
        }
        if (failure != null) {
            throw failure;
        }
        frozen = false;
    }

    /**
     * Whether {@link #freezeReplication()} is in effect.
     *
     * @return true between {@link #freezeReplication()} and {@link #thawReplication()}
     */
    public boolean isReplicationFrozen() {
        return frozen;
    }

    /**
     * Kills all sentinels, then all data nodes, and deletes their directories. Idempotent; never throws.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        // Sentinels first, so that they do not react to the data nodes going away.
        TopologySupport.closeAll(sentinels);
        TopologySupport.closeAll(nodes);
    }

    @Override
    public String toString() {
        return "RedisSentinelGroup[" + masterName + ", nodes " + ports(nodes) + ", sentinels " + ports(sentinels)
                + (frozen ? ", replication frozen" : "") + (closed.get() ? ", closed" : "") + "]";
    }

    // ---------------------------------------------------------------------------------------------------------

    private void launch(Builder builder) {
        long deadline = System.nanoTime() + builder.startupTimeout.toNanos();
        RedisServer master = dataNode(builder).start();
        nodes.add(master);
        for (int i = 0; i < builder.replicas; i++) {
            // --replicaof rather than a REPLICAOF command: a restarted replica comes back as a replica
            nodes.add(dataNode(builder).extraArgs("--replicaof", master.host(), Integer.toString(master.port()))
                    .start());
        }
        masterOfRecord = master;
        // Replicas must be attached before the sentinels start: a sentinel learns about replicas from the
        // master's INFO, which it reads on connect and then only every 10 s.
        TopologySupport.await("the replicas to sync with " + master, TopologySupport.remaining(deadline), () -> {
            String connected = TopologySupport.info(master, "replication").get("connected_slaves");
            return Integer.toString(builder.replicas).equals(connected) ? Boolean.TRUE : null;
        });
        String config = "sentinel monitor " + masterName + " " + master.host() + " " + master.port() + " "
                + QUORUM + "\n"
                + "sentinel down-after-milliseconds " + masterName + " " + downAfter.toMillis() + "\n"
                + "sentinel failover-timeout " + masterName + " " + failoverTimeout.toMillis() + "\n"
                + "sentinel parallel-syncs " + masterName + " " + builder.replicas + "\n";
        startSentinels(builder, config, deadline);
        // A failover needs the sentinels to know each other and the replicas.
        TopologySupport.await("the sentinels to discover the replicas and each other",
                TopologySupport.remaining(deadline), () -> {
                    for (RedisServer sentinel : sentinels) {
                        Map<String, String> state = TopologySupport.pairs(TopologySupport.call(sentinel,
                                PROBE_TIMEOUT, "SENTINEL", "MASTER", masterName));
                        if (!"master".equals(state.get("flags"))
                                || !Integer.toString(builder.replicas).equals(state.get("num-slaves"))
                                || !Integer.toString(SENTINELS - 1).equals(state.get("num-other-sentinels"))) {
                            throw new TopologySupport.NotYet(sentinel + " sees flags " + state.get("flags")
                                    + ", " + state.get("num-slaves") + " replicas, "
                                    + state.get("num-other-sentinels") + " other sentinels");
                        }
                        for (Object replica : TopologySupport.list(TopologySupport.call(sentinel, PROBE_TIMEOUT,
                                "SENTINEL", "REPLICAS", masterName))) {
                            String flags = TopologySupport.pairs(replica).get("flags");
                            if (!"slave".equals(flags)) {
                                throw new TopologySupport.NotYet(sentinel + " sees a replica with flags " + flags);
                            }
                        }
                    }
                    return Boolean.TRUE;
                });
    }

    /**
     * Sentinels find each other through hello messages, the first one 2 s after a sentinel learns of the
     * master: that wait was most of a group's start. Instead every sentinel starts knowing the others
     * (its id and theirs, with {@code known-sentinel} lines, as a sentinel writes them to its own config),
     * on ports picked beforehand; if one of those ports was taken meanwhile, the sentinels started so far
     * are stopped and the set starts again on fresh ports.
     */
    private void startSentinels(Builder builder, String config, long deadline) {
        SecureRandom random = new SecureRandom();
        RuntimeException last = null;
        for (int attempt = 0; attempt < 3; attempt++) {
            int[] ports = new int[SENTINELS];
            String[] ids = new String[SENTINELS];
            for (int i = 0; i < SENTINELS; i++) {
                ports[i] = freeLoopbackPort();
                byte[] id = new byte[20];
                random.nextBytes(id);
                ids[i] = HexFormat.of().formatHex(id);
            }
            List<RedisServer> started = new ArrayList<>();
            try {
                for (int i = 0; i < SENTINELS; i++) {
                    StringBuilder own = new StringBuilder(config).append("sentinel myid ").append(ids[i]).append('\n');
                    for (int j = 0; j < SENTINELS; j++) {
                        if (j != i) {
                            own.append("sentinel known-sentinel ").append(masterName).append(" 127.0.0.1 ")
                                    .append(ports[j]).append(' ').append(ids[j]).append('\n');
                        }
                    }
                    RedisServer.Builder sentinel = RedisServer.builder().port(ports[i]).sentinelConfig(own.toString())
                            .startupTimeout(TopologySupport.remaining(deadline));
                    if (builder.binary != null) {
                        sentinel.binary(builder.binary);
                    }
                    started.add(sentinel.start());
                }
                sentinels.addAll(started);
                return;
            } catch (RuntimeException e) { // most likely a picked port was taken by another process meanwhile
                last = e;
                TopologySupport.closeAll(started);
            }
        }
        throw last;
    }

    private static int freeLoopbackPort() {
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException("cannot find a free loopback port", e);
        }
    }

    private RedisServer.Builder dataNode(Builder builder) {
        RedisServer.Builder node = RedisServer.builder();
        if (builder.binary != null) {
            node.binary(builder.binary);
        }
        List<String> user = new ArrayList<>(List.of("--user", REPLICATION_USER, "on", ">" + replicationPassword,
                "~*"));
        String version = RedisBinaries.version(builder.binary != null ? builder.binary : RedisServer.binary());
        int major = RedisBinaries.major(version);
        int minor = Integer.parseInt(version.split("\\.")[1]);
        if (major < 6) {
            throw new IllegalStateException("RedisSentinelGroup needs Redis 6.0 or later (ACL users), found "
                    + version);
        }
        if (major > 6 || minor >= 2) {
            user.add("&*"); // pub/sub channel permissions exist since 6.2 (and default to none in 7)
        }
        user.add("+@all");
        node.extraArgs(user.toArray(new String[0]));
        node.extraArgs("--masteruser", REPLICATION_USER, "--masterauth", replicationPassword);
        return node;
    }

    /** The data node a sentinel names as master, or null if it knows none. */
    private RedisServer reportedMaster(RedisServer sentinel) {
        List<?> address = TopologySupport.list(TopologySupport.call(sentinel, PROBE_TIMEOUT,
                "SENTINEL", "GET-MASTER-ADDR-BY-NAME", masterName));
        if (address.size() < 2) {
            return null;
        }
        return nodeByPort(Integer.parseInt(String.valueOf(address.get(1))));
    }

    private RedisServer nodeByPort(int port) {
        for (RedisServer node : nodes) {
            if (node.port() == port) {
                return node;
            }
        }
        throw new IllegalStateException("the sentinels name port " + port + ", which is not a node of " + this);
    }

    private void ensureOpen() {
        if (closed.get()) {
            throw new IllegalStateException("the sentinel group was closed");
        }
    }

    private static List<Integer> ports(List<RedisServer> servers) {
        List<Integer> ports = new ArrayList<>();
        for (RedisServer server : servers) {
            ports.add(server.port());
        }
        return ports;
    }

    /**
     * Configures and starts a {@link RedisSentinelGroup}. Not thread-safe; use one builder per group. Values are
     * validated by {@link #start()}.
     */
    public static final class Builder {
        private String masterName = DEFAULT_MASTER_NAME;
        private int replicas = 2;
        private Duration downAfter = Duration.ofMillis(1000);
        private Duration failoverTimeout = Duration.ofMillis(3000);
        private Duration startupTimeout = Duration.ofSeconds(30);
        private Path binary;

        private Builder() {
        }

        /**
         * The name the sentinels monitor the master under; default {@value #DEFAULT_MASTER_NAME}.
         *
         * @param masterName 1 to 64 characters out of {@code A-Z a-z 0-9 . _ -}
         * @return this builder
         */
        public Builder masterName(String masterName) {
            this.masterName = masterName;
            return this;
        }

        /**
         * The number of replicas; default 2.
         *
         * @param replicas 1 to 5
         * @return this builder
         */
        public Builder replicas(int replicas) {
            this.replicas = replicas;
            return this;
        }

        /**
         * Sentinel's {@code down-after-milliseconds}: how long the master may be unresponsive before a sentinel
         * considers it down; default 1000 ms. Shorter values fail over faster but may fail over spuriously on
         * an overloaded machine.
         *
         * @param downAfter at least 1 ms
         * @return this builder
         */
        public Builder downAfter(Duration downAfter) {
            this.downAfter = downAfter;
            return this;
        }

        /**
         * Sentinel's {@code failover-timeout}; default 3000 ms. It bounds the phases of one failover attempt,
         * and a failed attempt is retried after twice this time.
         *
         * @param failoverTimeout at least 1 ms
         * @return this builder
         */
        public Builder failoverTimeout(Duration failoverTimeout) {
            this.failoverTimeout = failoverTimeout;
            return this;
        }

        /**
         * How long {@link #start()} waits for the replicas to sync and the sentinels to discover the replicas
         * and each other; default 30 s. Each process additionally has the {@link RedisServer} startup timeout.
         *
         * @param startupTimeout at least 1 ms
         * @return this builder
         */
        public Builder startupTimeout(Duration startupTimeout) {
            this.startupTimeout = startupTimeout;
            return this;
        }

        /**
         * Uses this binary for all processes instead of {@link RedisServer#binary()}.
         *
         * @param binary an executable {@code redis-server}, 6.0 or later
         * @return this builder
         */
        public Builder binary(Path binary) {
            this.binary = Objects.requireNonNull(binary, "binary");
            return this;
        }

        /**
         * Validates the settings, starts master, replicas and sentinels, and waits until the group is ready:
         * replicas attached, every sentinel knowing all replicas and the other sentinels.
         *
         * @return the running group
         * @throws IllegalArgumentException if a setting is invalid (nothing is started then)
         * @throws IllegalStateException if a process does not come up, the binary is older than 6.0, or the
         *     group is not ready within the startup timeout; everything started so far is cleaned up
         */
        public RedisSentinelGroup start() {
            if (masterName == null || !MASTER_NAME.matcher(masterName).matches()) {
                throw new IllegalArgumentException("master name must be 1-64 characters of [A-Za-z0-9._-]: "
                        + masterName);
            }
            if (replicas < 1 || replicas > 5) {
                throw new IllegalArgumentException("replicas must be 1..5: " + replicas);
            }
            TopologySupport.requireMillis("downAfter", downAfter);
            TopologySupport.requireMillis("failoverTimeout", failoverTimeout);
            TopologySupport.requireMillis("startupTimeout", startupTimeout);
            return new RedisSentinelGroup(this);
        }
    }
}
