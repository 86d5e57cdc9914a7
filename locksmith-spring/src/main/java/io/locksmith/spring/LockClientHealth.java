package io.locksmith.spring;

import io.locksmith.LockClient;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The health of one lock client, worked out the same way on every Boot line; each line's Actuator
 * configuration turns it into that line's {@code Health} (Boot 3.5: {@code org.springframework.boot.actuate.health},
 * Boot 4: {@code org.springframework.boot.health.contributor}). Immutable.
 *
 * @param status {@code UP}, {@code DOWN} or the configured uncertain status ({@code UP} by default)
 * @param details what the indicator shows: held and uncertain counts, the client
 * @param error why the backend could not be reached, or null
 */
record LockClientHealth(String status, Map<String, Object> details, RuntimeException error) {

  static final String UP = "UP";
  static final String DOWN = "DOWN";

  /**
   * The status code of {@code locksmith.health.uncertain-status}, in Actuator's spelling
   * ({@code out-of-service} becomes {@code OUT_OF_SERVICE}).
   *
   * @param properties the settings
   * @return the code a client reports while some of its leases are UNCERTAIN
   * @throws IllegalArgumentException if the setting is blank
   */
  static String uncertainStatus(LocksmithProperties properties) {
    String s = properties.getHealth().getUncertainStatus();
    if (s == null || s.isBlank()) {
      throw new IllegalArgumentException("locksmith.health.uncertain-status must not be blank (UP, OUT_OF_SERVICE)");
    }
    return s.trim().toUpperCase(Locale.ROOT).replace('-', '_');
  }

  /**
   * One check per client, by client name, in the registry's order: what each line's composite health
   * contributor is built from.
   *
   * @param clients the clients
   * @param trackers their held leases
   * @param properties for {@code locksmith.health.uncertain-status}
   * @return per client name, a check to run at each health request
   * @throws IllegalArgumentException if the uncertain status is blank
   */
  static Map<String, Supplier<LockClientHealth>> perClient(LockClients clients, LeaseTrackers trackers,
      LocksmithProperties properties) {
    String uncertainStatus = uncertainStatus(properties);
    Map<String, Supplier<LockClientHealth>> checks = new LinkedHashMap<>();
    clients.all().forEach((name, client) ->
        checks.put(name, () -> check(client, trackers.byClient.get(name), uncertainStatus)));
    return checks;
  }

  /**
   * DOWN when the backend cannot be reached (an inspect call, bounded by the client's command timeout),
   * {@code uncertainStatus} while some of its leases are UNCERTAIN (UP by default: a backend blip must not
   * take every instance out of service at once), else UP. The client's description is redacted.
   *
   * @param client the client to probe
   * @param tracker its held leases, or null when the client is not tracked
   * @param uncertainStatus the status code while leases are UNCERTAIN
   * @return the health; never throws
   */
  static LockClientHealth check(LockClient client, LeaseTracker tracker, String uncertainStatus) {
    Map<String, Object> details = new LinkedHashMap<>();
    String status;
    RuntimeException error = null;
    try {
      client.inspect("locksmith-health-probe");
      long uncertain = tracker == null ? 0 : tracker.uncertain();
      status = uncertain > 0 ? uncertainStatus : UP;
      if (tracker != null) {
        details.put("held", tracker.held().size());
        details.put("uncertain", uncertain);
      }
    } catch (RuntimeException e) {
      status = DOWN;
      error = e;
    }
    details.put("client", Redaction.redact(client.toString()));
    return new LockClientHealth(status, Collections.unmodifiableMap(details), error);
  }
}
