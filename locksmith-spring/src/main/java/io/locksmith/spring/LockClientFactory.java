package io.locksmith.spring;

import io.locksmith.ClientOptions;
import io.locksmith.LockClient;
import io.locksmith.LockOptions;
import io.locksmith.injvm.InJvmLockServer;
import java.util.List;
import java.util.Map;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.util.LambdaSafe;
import org.springframework.util.ClassUtils;

/**
 * Builds a lock client from its properties. Each backend's builder code is in its own class, loaded only
 * when that backend's module is on the classpath. Used at start-up only; thread-safe (stateless apart from
 * its collaborators).
 */
final class LockClientFactory {

  private final List<LockClientCustomizer<?>> customizers;
  private final BeanFactory beanFactory;
  private final LockObserverFactory observers;
  private final Map<String, LeaseTracker> trackers;

  /**
   * @param observers makes each client's metrics observer, or null
   * @param trackers where each client's lease tracker is put, by client name
   */
  LockClientFactory(List<LockClientCustomizer<?>> customizers, BeanFactory beanFactory, LockObserverFactory observers,
      Map<String, LeaseTracker> trackers) {
    this.customizers = customizers;
    this.beanFactory = beanFactory;
    this.observers = observers;
    this.trackers = trackers;
  }

  /**
   * The backend the properties select, or null when they select none.
   */
  static LockClientProperties.Backend backendOf(LockClientProperties p) {
    if (p.getBackend() != null) {
      return p.getBackend();
    }
    if (hasText(p.getRedis().getUri())) {
      return LockClientProperties.Backend.REDIS;
    }
    if (!p.getRedlock().getNodes().isEmpty()) {
      return LockClientProperties.Backend.REDLOCK;
    }
    if (hasText(p.getZookeeper().getConnectString())) {
      return LockClientProperties.Backend.ZOOKEEPER;
    }
    return null;
  }

  /**
   * Builds the client.
   *
   * @param clientName {@code "default"} or the client's name
   * @param prefix the properties' prefix, for error messages ({@code locksmith} or
   *     {@code locksmith.clients.<name>})
   */
  LockClient create(String clientName, String prefix, LockClientProperties p) {
    LockClientProperties.Backend backend = backendOf(p);
    if (backend == null) {
      throw new InvalidConfigurationPropertyValueException(prefix + ".backend", null,
          "no backend chosen: set it (in-jvm, redis, redlock, zookeeper, jdbc) or a backend's address");
    }
    return build(clientName, prefix, p, backend);
  }

  static String backendName(LockClientProperties.Backend backend) {
    return backend.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
  }

  private LockClient build(String clientName, String prefix, LockClientProperties p, LockClientProperties.Backend backend) {
    ClientOptions options = options(clientName, prefix, p, backend);
    switch (backend) {
      case IN_JVM:
        return new InJvmLockServer().newClient(options);
      case REDIS:
        require(prefix, backend, "io.locksmith.redis.RedisLockClient", "locksmith-redis");
        return RedisClients.redis(this, clientName, prefix, p, options);
      case REDLOCK:
        require(prefix, backend, "io.locksmith.redis.RedlockClient", "locksmith-redis");
        return RedisClients.redlock(this, clientName, prefix, p, options);
      case ZOOKEEPER:
        require(prefix, backend, "io.locksmith.zookeeper.ZooKeeperLockClient", "locksmith-zookeeper");
        return ZooKeeperClients.zookeeper(this, clientName, prefix, p, options, beanFactory);
      case JDBC:
        require(prefix, backend, "io.locksmith.jdbc.JdbcLockClient", "locksmith-jdbc");
        return JdbcClients.jdbc(this, clientName, prefix, p, options, beanFactory);
      default:
        throw new IllegalStateException("unknown backend " + backend);
    }
  }

  private ClientOptions options(String clientName, String prefix, LockClientProperties p, LockClientProperties.Backend backend) {
    ClientOptions.Builder b = ClientOptions.builder();
    String backendName = backendName(backend);
    LeaseTracker tracker = new LeaseTracker(observers == null ? null : observers.observerFor(clientName, backendName));
    trackers.put(clientName, tracker);
    b.observer(tracker);
    try {
      b.namespace(p.getNamespace());
      LockOptions lockOptions = p.isLeaseWatched() ? LockOptions.watched(p.getLeaseTime()) : LockOptions.fixed(p.getLeaseTime());
      b.defaultLockOptions(lockOptions);
    } catch (IllegalArgumentException | NullPointerException e) {
      throw new InvalidConfigurationPropertyValueException(prefix + ".lease-time", p.getLeaseTime(), e.getMessage());
    }
    if (p.getClientName() != null) {
      b.clientName(p.getClientName());
    }
    customize(clientName, b);
    try {
      return b.build();
    } catch (IllegalArgumentException e) {
      String property = e.getMessage() != null && e.getMessage().startsWith("clientName") ? ".client-name" : ".namespace";
      throw new InvalidConfigurationPropertyValueException(prefix + property,
          property.equals(".client-name") ? p.getClientName() : p.getNamespace(), e.getMessage());
    }
  }

  /** Applies the customizers whose type argument matches the builder. */
  @SuppressWarnings("unchecked")
  <B> void customize(String clientName, B builder) {
    LambdaSafe.callbacks(LockClientCustomizer.class, customizers, builder)
        .invoke(c -> ((LockClientCustomizer<B>) c).customize(clientName, builder));
  }

  private void require(String prefix, LockClientProperties.Backend backend, String className, String module) {
    ClassLoader loader = beanFactory instanceof ConfigurableBeanFactory
        ? ((ConfigurableBeanFactory) beanFactory).getBeanClassLoader() : LockClientFactory.class.getClassLoader();
    if (!ClassUtils.isPresent(className, loader)) {
      throw new InvalidConfigurationPropertyValueException(prefix + ".backend", backend,
          "the " + backend.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-') + " backend needs " + module
              + " on the classpath (add io.locksmith:" + module + ")");
    }
  }

  static boolean hasText(String s) {
    return s != null && !s.isBlank();
  }
}
