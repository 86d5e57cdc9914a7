package io.locksmith.spring;

import io.locksmith.LockClient;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The health of one lock client, worked out the same way on every Boot line; each line's Actuator
 * configuration turns it into that line's {@code Health} (Boot 3.5: {@code org.springframework.boot.actuate.health},
 * Boot 4: {@code org.springframework.boot.health.contributor}). Immutable.
 *
 * @param status {@code UP}, {@code DOWN} or {@code OUT_OF_SERVICE}
 * @param details what the indicator shows: held and uncertain counts, the client
 * @param error why the backend could not be reached, or null
 */
record LockClientHealth(String status, Map<String, Object> details, RuntimeException error) {

  static final String UP = "UP";
  static final String DOWN = "DOWN";
  static final String OUT_OF_SERVICE = "OUT_OF_SERVICE";

  /**
   * One check per client, by client name, in the registry's order: what each line's composite health
   * contributor is built from.
   *
   * @param clients the clients
   * @param trackers their held leases
   * @return per client name, a check to run at each health request
   */
  static Map<String, Supplier<LockClientHealth>> perClient(LockClients clients, LeaseTrackers trackers) {
    Map<String, Supplier<LockClientHealth>> checks = new LinkedHashMap<>();
    clients.all().forEach((name, client) -> checks.put(name, () -> check(client, trackers.byClient.get(name))));
    return checks;
  }

  /**
   * DOWN when the backend cannot be reached (an inspect call, bounded by the client's command timeout),
   * OUT_OF_SERVICE while some of its leases are UNCERTAIN, else UP.
   *
   * @param client the client to probe
   * @param tracker its held leases, or null when the client is not tracked
   * @return the health; never throws
   */
  static LockClientHealth check(LockClient client, LeaseTracker tracker) {
    Map<String, Object> details = new LinkedHashMap<>();
    String status;
    RuntimeException error = null;
    try {
      client.inspect("locksmith-health-probe");
      long uncertain = tracker == null ? 0 : tracker.uncertain();
      status = uncertain > 0 ? OUT_OF_SERVICE : UP;
      if (tracker != null) {
        details.put("held", tracker.held().size());
        details.put("uncertain", uncertain);
      }
    } catch (RuntimeException e) {
      status = DOWN;
      error = e;
    }
    details.put("client", client.toString());
    return new LockClientHealth(status, Collections.unmodifiableMap(details), error);
  }
}
