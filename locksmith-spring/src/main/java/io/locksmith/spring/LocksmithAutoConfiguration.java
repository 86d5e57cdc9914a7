package io.locksmith.spring;

import io.locksmith.LockClient;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.DependsOn;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.core.type.AnnotationMetadata;
import org.aopalliance.aop.Advice;

/**
 * Auto-configuration of Locksmith: the primary {@link LockClient} (when {@code locksmith.backend} or a
 * backend's address is set, and the application has no {@code LockClient} bean of its own), the named
 * clients of {@code locksmith.clients}, the {@link LockClients} registry, the {@link LockTemplate} and the
 * {@link DistributedLock} advisor. A client that cannot be built fails the start-up with an
 * {@code InvalidConfigurationPropertyValueException} naming the property.
 */
// By name, never by class: this class serves Boot 3.5 and Boot 4, which keep these configurations in different
// packages, and a class literal that does not resolve makes Spring drop the whole annotation (with only a warning).
// Boot orders after the names that exist and ignores the others.
@AutoConfiguration(afterName = {
    "org.springframework.boot.autoconfigure.aop.AopAutoConfiguration",
    // the application's DataSource (jdbc backend): Boot 3.5, Boot 4
    "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
    "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
    // Redis connection settings of the application: Boot 3.5, Boot 4
    "org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration",
    "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
    // a CuratorFramework bean (zookeeper backend without a connect string): Spring Cloud Zookeeper; Boot has none
    "org.springframework.cloud.zookeeper.ZookeeperAutoConfiguration"})
@EnableConfigurationProperties(LocksmithProperties.class)
public class LocksmithAutoConfiguration {

  /** Creates the auto-configuration; Spring calls this. */
  public LocksmithAutoConfiguration() {}

  static LockClientFactory factory(ObjectProvider<LockClientCustomizer<?>> customizers, BeanFactory beanFactory) {
    return new LockClientFactory(customizers.orderedStream().collect(Collectors.toList()), beanFactory,
        beanFactory.getBeanProvider(LockObserverFactory.class).getIfAvailable(), beanFactory.getBean(LeaseTrackers.class).byClient);
  }

  /**
   * Fails the start-up on an unknown {@code locksmith.*} property (see {@link LocksmithPropertiesCheck});
   * the clients depend on it, so that a misspelt property is reported before anything it would have
   * configured fails.
   */
  @Bean
  static LocksmithPropertiesCheck locksmithPropertiesCheck(Environment environment) {
    return LocksmithPropertiesCheck.check(environment);
  }

  /**
   * Tracks, measures and observes the application's own {@code LockClient} beans as the starter's own clients
   * (see {@link ApplicationLockClients}).
   */
  @Bean
  @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
  static ApplicationLockClients locksmithApplicationClients(ConfigurableListableBeanFactory beanFactory) {
    return new ApplicationLockClients(beanFactory);
  }

  @Bean
  LeaseTrackers locksmithLeaseTrackers() {
    return new LeaseTrackers();
  }

  /**
   * The primary lock client.
   *
   * @param properties the settings
   * @param customizers the application's customizers
   * @param beanFactory for the DataSource or CuratorFramework bean a backend may use
   * @return the client; closed with the context
   */
  @Bean
  @ConditionalOnMissingBean(LockClient.class)
  @Conditional(PrimaryClientConfigured.class)
  @DependsOn("locksmithPropertiesCheck")
  public LockClient lockClient(LocksmithProperties properties, ObjectProvider<LockClientCustomizer<?>> customizers,
      BeanFactory beanFactory) {
    return factory(customizers, beanFactory).create(LockClients.DEFAULT, "locksmith", properties);
  }

  /**
   * Every client by name.
   *
   * @param properties the settings
   * @param primary the primary client, if any
   * @param customizers the application's customizers
   * @param beanFactory for the DataSource or CuratorFramework bean a backend may use
   * @return the registry; closes the named clients with the context
   */
  @Bean
  @ConditionalOnMissingBean
  @DependsOn("locksmithPropertiesCheck")
  public LockClients lockClients(LocksmithProperties properties, ObjectProvider<LockClient> primary,
      ObjectProvider<LockClientCustomizer<?>> customizers, BeanFactory beanFactory) {
    LockClientFactory factory = factory(customizers, beanFactory);
    Map<String, LockClient> named = new LinkedHashMap<>();
    try {
      for (Map.Entry<String, LockClientProperties> e : properties.getClients().entrySet()) {
        if (LockClients.DEFAULT.equals(e.getKey())) {
          throw new IllegalArgumentException("locksmith.clients.default: 'default' is the primary client's name; use locksmith.* for it");
        }
        named.put(e.getKey(), factory.create(e.getKey(), "locksmith.clients." + e.getKey(), e.getValue()));
      }
    } catch (RuntimeException e) {
      named.values().forEach(LockClient::close);
      throw e;
    }
    // lock waits as Micrometer observations need the start of each wait, which a client's observer is not told:
    // the starter's own calls go through an observing view (a client the application built is one already)
    return new LockClients(primary.getIfUnique(), named, (name, client) -> {
      AcquisitionHook hook = ObservingLockClient.isObserving(client) ? null
          : ApplicationLockClients.observationHook(beanFactory, name, ApplicationLockClients.backendOf(client));
      return hook == null ? client : ObservingLockClient.wrap(client, hook);
    });
  }

  /**
   * The programmatic helper on the primary client.
   *
   * @param clients the clients
   * @return the template
   */
  @Bean
  @ConditionalOnMissingBean
  public LockTemplate lockTemplate(LockClients clients) {
    return new LockTemplate(clients, LockClients.DEFAULT);
  }

  /** The {@link DistributedLock} advisor, outside {@code @Transactional} by default. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnProperty(prefix = "locksmith.annotation", name = "enabled", matchIfMissing = true)
  @Import(AutoProxyRegistrar.class)
  static class AnnotationConfiguration {

    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static DistributedLockMethods distributedLockMethods(ConfigurableListableBeanFactory beanFactory) {
      return new DistributedLockMethods(beanFactory);
    }

    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static DistributedLockAdvisor distributedLockAdvisor(ObjectProvider<LockClients> clients,
        ObjectProvider<LocksmithProperties> properties, ObjectProvider<LockedCallsInFlight> inFlight,
        ConfigurableBeanFactory beanFactory) {
      return new DistributedLockAdvisor(clients, properties, inFlight, beanFactory);
    }

    @Bean
    LockedCallsInFlight locksmithLockedCallsInFlight(LocksmithProperties properties) {
      return new LockedCallsInFlight(properties.getAnnotation().getShutdownWait());
    }
  }

  /**
   * Makes sure an auto-proxy creator exists even where Boot's AOP auto-configuration is off; the
   * infrastructure one is enough, as the advisor has the infrastructure role.
   */
  static class AutoProxyRegistrar implements ImportBeanDefinitionRegistrar {
    @Override
    public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
      AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
    }
  }

  /**
   * Advises {@link DistributedLock} methods. Created early (it is a bean post-processing concern), so it
   * looks its collaborators up lazily, at the first call.
   */
  static final class DistributedLockAdvisor extends AbstractPointcutAdvisor {
    private static final long serialVersionUID = 1L;

    private final transient AnnotationMatchingPointcut pointcut =
        new AnnotationMatchingPointcut(null, DistributedLock.class, true);
    private final transient ObjectProvider<LockClients> clients;
    private final transient ObjectProvider<LocksmithProperties> properties;
    private final transient ObjectProvider<LockedCallsInFlight> inFlight;
    private final transient ConfigurableBeanFactory beanFactory;
    private transient volatile DistributedLockInterceptor interceptor;

    DistributedLockAdvisor(ObjectProvider<LockClients> clients, ObjectProvider<LocksmithProperties> properties,
        ObjectProvider<LockedCallsInFlight> inFlight, ConfigurableBeanFactory beanFactory) {
      this.clients = clients;
      this.properties = properties;
      this.inFlight = inFlight;
      this.beanFactory = beanFactory;
    }

    @Override
    public int getOrder() {
      LocksmithProperties p = properties.getIfAvailable();
      return p == null ? Integer.MAX_VALUE - 1000 : p.getAnnotation().getOrder();
    }

    @Override
    public org.springframework.aop.Pointcut getPointcut() {
      return pointcut;
    }

    @Override
    public Advice getAdvice() {
      return (org.aopalliance.intercept.MethodInterceptor) invocation -> interceptor().invoke(invocation);
    }

    private DistributedLockInterceptor interceptor() {
      DistributedLockInterceptor i = interceptor;
      if (i == null) {
        synchronized (this) {
          i = interceptor;
          if (i == null) {
            LocksmithProperties p = properties.getObject();
            i = new DistributedLockInterceptor(clients.getObject(), beanFactory, beanFactory::resolveEmbeddedValue,
                p.getAnnotation().getWaitTime(), inFlight.getObject());
            interceptor = i;
          }
        }
      }
      return i;
    }
  }

  /** True when the primary client's backend is chosen, explicitly or by a backend's address. */
  static final class PrimaryClientConfigured extends SpringBootCondition {
    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
      LockClientProperties p = Binder.get(context.getEnvironment()).bind("locksmith", LockClientProperties.class)
          .orElseGet(LockClientProperties::new);
      LockClientProperties.Backend backend = LockClientFactory.backendOf(p);
      return backend == null
          ? ConditionOutcome.noMatch("no locksmith.backend, locksmith.redis.uri, locksmith.redlock.nodes or locksmith.zookeeper.connect-string")
          : ConditionOutcome.match("locksmith backend " + backend);
    }
  }
}
