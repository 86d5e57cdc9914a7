package io.locksmith.testkit;

import java.util.Objects;
import java.util.function.Supplier;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * JUnit 5 extension holding one Redis topology (a {@link RedisCluster}, a {@link RedisSentinelGroup})
 * for the whole test run: the first class that registers it starts the topology, every later class
 * registering the same kind gets the same instance, and JUnit closes it when the run ends — also when
 * tests fail. Suits contract suites (TCK subclasses) that only need a working topology; a test that
 * changes the topology (a failover, a slot migration) should start its own.
 *
 * <pre>{@code
 * class RedisClusterTckTest extends LockClientTck {
 *   @RegisterExtension static final SharedTopology<RedisCluster> CLUSTER = SharedTopology.cluster();
 *   @Override protected LockClient newClient() { return RedisLockClient.create(CLUSTER.get().seedUri().replace("redis://", "redis-cluster://")); }
 * }
 * }</pre>
 *
 * <p>Thread-safety: {@link #get()} may be called from any thread once {@code beforeAll} ran.
 *
 * @param <T> the topology type
 */
public final class SharedTopology<T extends AutoCloseable> implements BeforeAllCallback {
  private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(SharedTopology.class);

  private final Class<T> type;
  private final Supplier<T> starter;
  private volatile T topology;

  private SharedTopology(Class<T> type, Supplier<T> starter) {
    this.type = type;
    this.starter = starter;
  }

  /** @return the shared 3-master, 3-replica cluster of the run */
  public static SharedTopology<RedisCluster> cluster() {
    return new SharedTopology<>(RedisCluster.class, RedisCluster::start);
  }

  /** @return the shared Sentinel group (master, 2 replicas, 3 sentinels) of the run */
  public static SharedTopology<RedisSentinelGroup> sentinelGroup() {
    return new SharedTopology<>(RedisSentinelGroup.class, RedisSentinelGroup::start);
  }

  /**
   * A shared instance of any server kind, e.g. {@code SharedTopology.of(PostgresServer.class,
   * PostgresServer::start)}: one instance per {@code type} for the whole run.
   *
   * @param type the server type, which keys the instance in the run
   * @param starter starts the server; called once per run
   * @param <T> the server type
   * @return the extension
   * @throws NullPointerException if an argument is null
   */
  public static <T extends AutoCloseable> SharedTopology<T> of(Class<T> type, Supplier<T> starter) {
    return new SharedTopology<>(Objects.requireNonNull(type, "type"), Objects.requireNonNull(starter, "starter"));
  }

  /**
   * @return the running topology
   * @throws IllegalStateException if called before {@code beforeAll} (the extension is not registered
   *     with {@code @RegisterExtension} on a static field)
   */
  public T get() {
    T t = topology;
    if (t == null) {
      throw new IllegalStateException("no " + type.getSimpleName() + " yet: register the extension with "
          + "@RegisterExtension on a static field and call get() from a test or lifecycle method");
    }
    return t;
  }

  /**
   * Starts the topology unless this run already has one.
   *
   * @throws IllegalStateException if it cannot be started
   */
  @Override
  public void beforeAll(ExtensionContext context) {
    Holder<?> holder = context.getRoot().getStore(NAMESPACE)
        .getOrComputeIfAbsent(type, k -> new Holder<>(starter.get()), Holder.class);
    topology = type.cast(Objects.requireNonNull(holder.topology));
  }

  /** Closes the topology at the end of the run. */
  private static final class Holder<T extends AutoCloseable> implements ExtensionContext.Store.CloseableResource {
    final T topology;

    Holder(T topology) {
      this.topology = topology;
    }

    @Override
    public void close() throws Exception {
      topology.close();
    }
  }
}
