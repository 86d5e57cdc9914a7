package io.locksmith.spring;

import java.util.Map;
import org.springframework.boot.actuate.health.CompositeHealthContributor;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthContributorRegistry;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration;
import org.springframework.boot.autoconfigure.jdbc.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.autoconfigure.jdbc.JdbcTemplateAutoConfiguration;
import org.springframework.boot.autoconfigure.transaction.TransactionAutoConfiguration;
import org.springframework.boot.autoconfigure.http.HttpMessageConvertersAutoConfiguration;
import org.springframework.boot.autoconfigure.jackson.JacksonAutoConfiguration;
import org.springframework.boot.autoconfigure.web.servlet.DispatcherServletAutoConfiguration;
import org.springframework.boot.autoconfigure.web.servlet.WebMvcAutoConfiguration;
import org.springframework.context.ApplicationContext;

/**
 * What the shared starter tests need that Boot 3.5 names differently from Boot 4 (locksmith-spring-boot4-starter
 * has its own BootLine with the same methods): the JDBC and transaction auto-configurations, Spring MVC's, the Actuator
 * auto-configurations and the health API.
 */
final class BootLine {
  static final String NAME = "Boot 3.5";

  private BootLine() {}

  /** Health of one indicator, in terms both lines share. */
  record HealthView(String status, Map<String, Object> details) {}

  static Class<?>[] jdbcWithTransactions() {
    return new Class<?>[] {DataSourceAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
        JdbcTemplateAutoConfiguration.class, TransactionAutoConfiguration.class};
  }

  /** Spring MVC with JSON message conversion (no server): what a servlet web application context needs. */
  static Class<?>[] webMvc() {
    return new Class<?>[] {JacksonAutoConfiguration.class, HttpMessageConvertersAutoConfiguration.class,
        DispatcherServletAutoConfiguration.class, WebMvcAutoConfiguration.class};
  }

  /** Locksmith's Actuator auto-configurations on this line: the shared endpoint and this line's health. */
  static Class<?>[] locksmithActuator() {
    return new Class<?>[] {LocksmithEndpointAutoConfiguration.class, LocksmithActuatorAutoConfiguration.class};
  }

  /** The indicator of one client, from Locksmith's composite contributor bean. */
  static HealthView health(ApplicationContext ctx, String client) {
    Health h = ((HealthIndicator) ctx.getBean(CompositeHealthContributor.class).getContributor(client)).health();
    return new HealthView(h.getStatus().getCode(), h.getDetails());
  }

  /** Whether Actuator's registry (what /actuator/health reports) has a contributor of that name. */
  static boolean healthRegistryHas(ApplicationContext ctx, String name) {
    return ctx.getBean(HealthContributorRegistry.class).getContributor(name) != null;
  }
}
