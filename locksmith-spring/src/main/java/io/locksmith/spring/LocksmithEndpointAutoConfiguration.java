package io.locksmith.spring;

import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;

/**
 * The {@code locksmith} Actuator endpoint ({@link LocksmithEndpoint}) on either Boot line, when Actuator is
 * on the classpath and the endpoint is exposed ({@code management.endpoints.web.exposure.include}). The
 * health contributor is per line: its API moved in Boot 4.
 */
@AutoConfiguration(after = LocksmithAutoConfiguration.class)
@ConditionalOnClass(Endpoint.class)
@ConditionalOnBean(LockClients.class)
public class LocksmithEndpointAutoConfiguration {

  /** Creates the auto-configuration; Spring calls this. */
  public LocksmithEndpointAutoConfiguration() {}

  /**
   * The endpoint.
   *
   * @param clients the clients
   * @param trackers their held leases
   * @return the endpoint
   */
  @Bean
  @ConditionalOnAvailableEndpoint
  LocksmithEndpoint locksmithEndpoint(LockClients clients, LeaseTrackers trackers) {
    return new LocksmithEndpoint(clients, trackers);
  }
}
