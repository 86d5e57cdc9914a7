package io.locksmith.spring;

import io.locksmith.Lease;
import io.locksmith.LockClient;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.health.CompositeHealthContributor;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthContributor;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;

/**
 * Actuator support: a health contributor {@code locksmith} with one indicator per client, and the
 * {@code locksmith} endpoint listing the leases this instance holds.
 */
@AutoConfiguration(after = LocksmithAutoConfiguration.class)
@ConditionalOnClass({HealthIndicator.class, Endpoint.class})
@ConditionalOnBean(LockClients.class)
public class LocksmithActuatorAutoConfiguration {

  /** Creates the auto-configuration; Spring calls this. */
  public LocksmithActuatorAutoConfiguration() {}

  /**
   * One health indicator per client: DOWN when the backend cannot be reached (an inspect call, bounded by
   * the client's command timeout), {@code locksmith.health.uncertain-status} (UP by default) while some of
   * its leases are UNCERTAIN, else UP; the details give the held and uncertain counts.
   *
   * @param clients the clients
   * @param trackers their held leases
   * @param properties for the uncertain status
   * @return the contributor
   */
  @Bean
  @ConditionalOnEnabledHealthIndicator("locksmith")
  HealthContributor locksmithHealthContributor(LockClients clients, LeaseTrackers trackers, LocksmithProperties properties) {
    Status uncertainStatus = new Status(properties.getHealth().getUncertainStatus().trim()
        .toUpperCase(java.util.Locale.ROOT).replace('-', '_'));
    Map<String, HealthIndicator> indicators = new LinkedHashMap<>();
    clients.all().forEach((name, client) -> indicators.put(name, () -> health(client, trackers.byClient.get(name), uncertainStatus)));
    return CompositeHealthContributor.fromMap(indicators);
  }

  static Health health(LockClient client, LeaseTracker tracker, Status uncertainStatus) {
    Health.Builder b;
    try {
      client.inspect("locksmith-health-probe");
      long uncertain = tracker == null ? 0 : tracker.uncertain();
      b = uncertain > 0 ? Health.status(uncertainStatus) : Health.up();
      if (tracker != null) {
        b.withDetail("held", tracker.held().size()).withDetail("uncertain", uncertain);
      }
    } catch (RuntimeException e) {
      b = Health.down(e);
    }
    return b.withDetail("client", Redaction.redact(client.toString())).build();
  }

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

  /** {@code /actuator/locksmith}: this instance's held leases by client. Thread-safe. */
  @Endpoint(id = "locksmith")
  public static class LocksmithEndpoint {
    private final LockClients clients;
    private final LeaseTrackers trackers;

    LocksmithEndpoint(LockClients clients, LeaseTrackers trackers) {
      this.clients = clients;
      this.trackers = trackers;
    }

    /**
     * The held leases.
     *
     * @return per client: each held lease's name, fencing token, state, remaining validity and hold count
     */
    @ReadOperation
    public Map<String, List<Map<String, Object>>> leases() {
      Map<String, List<Map<String, Object>>> out = new LinkedHashMap<>();
      for (String name : clients.all().keySet()) {
        LeaseTracker t = trackers.byClient.get(name);
        out.put(name, t == null ? List.of() : t.held().stream().map(LocksmithEndpoint::describe).collect(Collectors.toList()));
      }
      return out;
    }

    private static Map<String, Object> describe(Lease lease) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("name", lease.lockName());
      m.put("fencingToken", lease.fencingToken());
      m.put("state", lease.state().name());
      m.put("remainingValidity", lease.remainingValidity().toString());
      m.put("holdCount", lease.holdCount());
      return m;
    }
  }
}
