package io.locksmith.spring;

import io.locksmith.LockClient;
import io.locksmith.LockObserver;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.util.ClassUtils;

/**
 * Gives an application's own {@link LockClient} beans what the starter gives the clients it builds: a lease
 * tracker (the {@code locksmith} endpoint and health details), meters ({@link LockObserverFactory}) and lock-wait
 * observations ({@link LockObservations}). A client's {@code ClientOptions} observer is fixed when it is built,
 * so the bean is replaced by an {@link ObservingLockClient} over it, once: the starter's own clients (whose
 * observer is a {@link LeaseTracker}) and clients already observed are left as they are.
 *
 * <p>The replacement implements {@link LockClient} only, so a bean whose declared type is a concrete client
 * ({@code @Bean RedisLockClient ...}), which the application may inject as such, is left unobserved, with a
 * WARN saying so and how to change it. A client that has an observer of its own gets the tracker and the
 * observations, not a second set of meters. The primary client is the only (or the {@code @Primary})
 * {@code LockClient} bean, named {@code default}; others are named by their bean names. Thread-safe.
 */
final class ApplicationLockClients implements BeanPostProcessor {

  private static final Logger log = LoggerFactory.getLogger(ApplicationLockClients.class);
  private static final boolean OBSERVATION = ClassUtils.isPresent("io.micrometer.observation.ObservationRegistry",
      ApplicationLockClients.class.getClassLoader());

  private final ConfigurableListableBeanFactory beanFactory;

  ApplicationLockClients(ConfigurableListableBeanFactory beanFactory) {
    this.beanFactory = beanFactory;
  }

  @Override
  public Object postProcessAfterInitialization(Object bean, String beanName) {
    if (!(bean instanceof LockClient client) || ObservingLockClient.isObserving(bean)) {
      return bean;
    }
    LockObserver own = client.options().observer().orElse(null);
    if (own instanceof LeaseTracker) {
      return bean; // built by the starter, which tracks and measures it already
    }
    Class<?> declared = declaredType(beanName);
    if (declared != null && declared != LockClient.class) {
      log.warn("LockClient bean '{}' is declared as {}: Locksmith leaves it as it is (observing it would change its type),"
          + " so its leases are not in the locksmith endpoint and it has no Locksmith meters or observations;"
          + " declare the bean's type as LockClient to have them", beanName, declared.getName());
      return bean;
    }
    String name = isPrimary(beanName) ? LockClients.DEFAULT : beanName;
    String backend = backendOf(client);
    List<AcquisitionHook> hooks = new ArrayList<>();
    LeaseTrackers trackers = beanFactory.getBeanProvider(LeaseTrackers.class).getIfAvailable();
    LockObserver meters = null;
    if (own == null) {
      LockObserverFactory factory = beanFactory.getBeanProvider(LockObserverFactory.class).getIfAvailable();
      meters = factory == null ? null : factory.observerFor(name, backend);
    }
    LeaseTracker tracker = new LeaseTracker(meters);
    if (trackers != null && trackers.byClient.putIfAbsent(name, tracker) != null) {
      log.warn("LockClient bean '{}' has the name of a configured client; it is not tracked", beanName);
      if (meters != null) {
        hooks.add(AcquisitionHook.of(meters));
      }
    } else {
      hooks.add(AcquisitionHook.of(tracker));
    }
    AcquisitionHook observations = observationHook(beanFactory, name, backend);
    if (observations != null) {
      hooks.add(observations);
    }
    return ObservingLockClient.wrap(client, AcquisitionHook.all(hooks));
  }

  /**
   * The observation hook of one client, when Micrometer's Observation API is on the class path and the starter
   * defined {@link LockObservations} (there is an {@code ObservationRegistry}); else null.
   */
  static AcquisitionHook observationHook(BeanFactory beanFactory, String client, String backend) {
    return OBSERVATION ? Observations.hook(beanFactory, client, backend) : null;
  }

  /** Touches the Observation API only when it is present. */
  private static final class Observations {
    static AcquisitionHook hook(BeanFactory beanFactory, String client, String backend) {
      LockObservations o = beanFactory.getBeanProvider(LockObservations.class).getIfAvailable();
      return o == null ? null : o.hookFor(client, backend);
    }
  }

  private Class<?> declaredType(String beanName) {
    if (!beanFactory.containsBeanDefinition(beanName)) {
      return null;
    }
    return beanFactory.getMergedBeanDefinition(beanName).getResolvableType().resolve();
  }

  private boolean isPrimary(String beanName) {
    String[] all = beanFactory.getBeanNamesForType(LockClient.class, true, false);
    if (all.length == 1) {
      return true;
    }
    if (!beanFactory.containsBeanDefinition(beanName)) {
      return false;
    }
    BeanDefinition bd = beanFactory.getMergedBeanDefinition(beanName);
    return bd.isPrimary();
  }

  /** The backend's name as the starter's clients report it, from the client's class. */
  static String backendOf(LockClient client) {
    return switch (client.getClass().getName()) {
      case "io.locksmith.redis.RedisLockClient" -> "redis";
      case "io.locksmith.redis.RedlockClient" -> "redlock";
      case "io.locksmith.zookeeper.ZooKeeperLockClient" -> "zookeeper";
      case "io.locksmith.jdbc.JdbcLockClient" -> "jdbc";
      case "io.locksmith.internal.DefaultLockClient" -> "in-jvm";
      default -> "other";
    };
  }
}
