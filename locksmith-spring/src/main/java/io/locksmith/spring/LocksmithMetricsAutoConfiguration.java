package io.locksmith.spring;

import io.locksmith.micrometer.LocksmithMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * Micrometer meters for every auto-configured lock client ({@link LocksmithMetrics}), when
 * {@code locksmith-micrometer} is on the classpath. The registry is looked up when the clients are built;
 * without a {@code MeterRegistry} bean nothing is measured.
 */
@AutoConfiguration(before = LocksmithAutoConfiguration.class)
@ConditionalOnClass({LocksmithMetrics.class, MeterRegistry.class})
@ConditionalOnProperty(prefix = "locksmith.metrics", name = "enabled", matchIfMissing = true)
public class LocksmithMetricsAutoConfiguration {

  /** Creates the auto-configuration; Spring calls this. */
  public LocksmithMetricsAutoConfiguration() {}

  /**
   * One {@link LocksmithMetrics} per client, tagged with its name and backend.
   *
   * @param registry the application's registry, if any
   * @param properties for the name-tag patterns
   * @return the observer factory
   */
  @Bean
  @ConditionalOnMissingBean
  public LockObserverFactory locksmithMetricsObservers(ObjectProvider<MeterRegistry> registry,
      ObjectProvider<LocksmithProperties> properties) {
    return (client, backend) -> {
      MeterRegistry r = registry.getIfUnique();
      if (r == null) {
        return null;
      }
      LocksmithProperties p = properties.getIfAvailable();
      return LocksmithMetrics.builder(r).client(client).backend(backend)
          .nameTagPatterns(p == null ? java.util.List.of() : p.getMetrics().getNameTags()).build();
    };
  }
}
