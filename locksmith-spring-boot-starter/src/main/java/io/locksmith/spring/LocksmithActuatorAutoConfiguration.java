package io.locksmith.spring;

import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.actuate.health.CompositeHealthContributor;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthContributor;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;

/**
 * Boot 3.5's Actuator health contributor {@code locksmith}, with one indicator per client (Boot 4 has its
 * own, in {@code locksmith-spring-boot4-starter}; the {@code locksmith} endpoint is shared, see {@link
 * LocksmithEndpointAutoConfiguration}).
 */
@AutoConfiguration(after = LocksmithAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnBean(LockClients.class)
public class LocksmithActuatorAutoConfiguration {

  /** Creates the auto-configuration; Spring calls this. */
  public LocksmithActuatorAutoConfiguration() {}

  /**
   * One health indicator per client, as {@link LockClientHealth#check} works it out: DOWN when the backend
   * cannot be reached, {@code locksmith.health.uncertain-status} (UP by default) while some of its leases are
   * UNCERTAIN, else UP; the details give the held and uncertain counts and the client (redacted).
   *
   * @param clients the clients
   * @param trackers their held leases
   * @param properties for the uncertain status
   * @return the contributor
   * @throws IllegalArgumentException if {@code locksmith.health.uncertain-status} is blank
   */
  @Bean
  @ConditionalOnEnabledHealthIndicator("locksmith")
  HealthContributor locksmithHealthContributor(LockClients clients, LeaseTrackers trackers,
      LocksmithProperties properties) {
    return CompositeHealthContributor.fromMap(LockClientHealth.perClient(clients, trackers, properties),
        check -> (HealthIndicator) () -> health(check.get()));
  }

  /** This line's {@code Health} of a check worked out by the shared code. */
  static Health health(LockClientHealth h) {
    Health.Builder b = Health.status(h.status()).withDetails(h.details());
    return h.error() == null ? b.build() : b.withException(h.error()).build();
  }
}
