package io.locksmith.spring;

import io.locksmith.LockClient;
import io.locksmith.spring.integration.LocksmithLockRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * A Spring Integration {@link LockRegistry} over the primary lock client ({@link LocksmithLockRegistry},
 * with its defaults: watched leases of the client's lease time, lock names equal to the keys), when
 * {@code spring-integration-core} and Locksmith's adapter are on the classpath ({@code
 * locksmith-spring-integration} for Spring Integration 6.5 / Boot 3.5, {@code locksmith-spring-integration7}
 * for SI 7 / Boot 4: the same class, so this configuration serves both lines), there is
 * one {@link LockClient} bean, and the application has no {@code LockRegistry} bean of its own. An
 * application that wants other settings declares its own registry, built with {@link
 * LocksmithLockRegistry#builder}, and this one steps aside.
 */
@AutoConfiguration(after = LocksmithAutoConfiguration.class)
@ConditionalOnClass({LockRegistry.class, LocksmithLockRegistry.class})
public class LocksmithSpringIntegrationAutoConfiguration {

  /** Creates the auto-configuration; Spring calls this. */
  public LocksmithSpringIntegrationAutoConfiguration() {}

  /**
   * @param client the primary lock client
   * @return the registry; it owns nothing, the client is closed with the context
   */
  @Bean
  @ConditionalOnMissingBean(LockRegistry.class)
  @ConditionalOnSingleCandidate(LockClient.class)
  public LocksmithLockRegistry lockRegistry(LockClient client) {
    return new LocksmithLockRegistry(client);
  }
}
