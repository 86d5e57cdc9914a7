package io.locksmith.spring;

import io.micrometer.observation.ObservationRegistry;
import java.util.List;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Lock waits and holds as Micrometer observations ({@link LockObservations}: {@code locksmith.lock.wait},
 * {@code locksmith.lock.hold}), so that the application's tracing shows them as spans, on either Boot line.
 * Active when Micrometer's Observation API is on the class path; the registry is looked up when each client is
 * built, and without an {@code ObservationRegistry} bean (Boot defines one with Actuator) nothing is observed and
 * the clients are not wrapped. Boot's {@code management.observations.enable.locksmith=false} should turn them off.
 */
@AutoConfiguration(before = LocksmithAutoConfiguration.class)
@ConditionalOnClass(ObservationRegistry.class)
public class LocksmithObservationAutoConfiguration {

  /** Creates the auto-configuration; Spring calls this. */
  public LocksmithObservationAutoConfiguration() {}

  @Bean
  @ConditionalOnMissingBean
  LockObservations locksmithObservations(ObjectProvider<ObservationRegistry> registry,
      ObjectProvider<LocksmithProperties> properties) {
    LocksmithProperties p = properties.getIfAvailable();
    return new LockObservations(registry::getIfUnique, p == null ? List.of() : p.getMetrics().getNameTags());
  }
}
