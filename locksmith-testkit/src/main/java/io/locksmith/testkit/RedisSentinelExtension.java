package io.locksmith.testkit;

import java.time.Duration;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * JUnit 5 extension giving a test class a {@link RedisSentinelGroup} of its own, for tests that fail the
 * master over: the group starts before the first test and is closed after the last (also when tests
 * fail), and before each test replication is thawed and every replica is awaited in sync with the
 * current master (re-pointed at it if the sentinels have not done so within {@link #SENTINELS_FIRST}), so a
 * test does not start on the debris of the previous one's failover.
 *
 * <pre>{@code
 * @RegisterExtension static final RedisSentinelExtension SENTINEL = RedisSentinelExtension.withReplicas(2);
 * ... RedisLockClient.create(SENTINEL.group().sentinelUri()) ...
 * }</pre>
 *
 * <p>Thread-safety: {@link #group()} may be called from any thread once {@code beforeAll} ran.
 */
public final class RedisSentinelExtension implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback {
    /**
     * How long a test waits for the replicas before it starts. After a failover the sentinels turn an old
     * master into a replica at a later configuration check; on a machine loaded by parallel builds that
     * was seen to take more than 30 s.
     */
    public static final Duration REPLICATION_WAIT = Duration.ofSeconds(90);

    /**
     * How long the sentinels get to restore the topology themselves before the extension re-points stray
     * replicas ({@link RedisSentinelGroup#repointReplicas()}): CI once saw a replica follow another replica
     * for the whole {@link #REPLICATION_WAIT}.
     */
    static final Duration SENTINELS_FIRST = Duration.ofSeconds(15);

    private final int replicas;
    private volatile RedisSentinelGroup group;

    private RedisSentinelExtension(int replicas) {
        this.replicas = replicas;
    }

    /**
     * @param replicas how many replicas the group has besides its master, at least 1
     * @return an extension that starts such a group for its test class
     * @throws IllegalArgumentException if {@code replicas} is below 1
     */
    public static RedisSentinelExtension withReplicas(int replicas) {
        if (replicas < 1) {
            throw new IllegalArgumentException("a failover needs at least 1 replica, was " + replicas);
        }
        return new RedisSentinelExtension(replicas);
    }

    /**
     * @return the class's group
     * @throws IllegalStateException before {@code beforeAll} or after {@code afterAll}
     */
    public RedisSentinelGroup group() {
        RedisSentinelGroup g = group;
        if (g == null) {
            throw new IllegalStateException("the sentinel group runs only between beforeAll and afterAll");
        }
        return g;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        group = RedisSentinelGroup.builder().replicas(replicas).start();
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        RedisSentinelGroup g = group();
        g.thawReplication();
        try {
            g.awaitReplication(SENTINELS_FIRST);
        } catch (IllegalStateException slow) {
            g.repointReplicas();
            g.awaitReplication(REPLICATION_WAIT);
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        RedisSentinelGroup g = group;
        group = null;
        if (g != null) {
            g.close();
        }
    }
}
