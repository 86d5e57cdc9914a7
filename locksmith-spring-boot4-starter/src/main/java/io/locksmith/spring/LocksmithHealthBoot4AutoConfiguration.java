package io.locksmith.spring;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthContributor;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * Boot 4's health contributor {@code locksmith}, with one indicator per client, on the health API that Boot 4
 * moved to {@code spring-boot-health} ({@code org.springframework.boot.health.*}). What an indicator reports
 * is worked out by the code both lines share ({@link LockClientHealth#check}); the Boot 3.5 starter has the
 * same contributor on Boot 3.5's API. Active when the application has Actuator (spring-boot-health) and
 * {@code management.health.locksmith.enabled} is not false.
 */
@AutoConfiguration(after = LocksmithAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnBean(LockClients.class)
public class LocksmithHealthBoot4AutoConfiguration {

  /** Creates the auto-configuration; Spring calls this. */
  public LocksmithHealthBoot4AutoConfiguration() {}

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
