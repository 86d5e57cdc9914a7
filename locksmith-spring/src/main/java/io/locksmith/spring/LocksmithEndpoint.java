package io.locksmith.spring;

import io.locksmith.Lease;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * {@code /actuator/locksmith}: this instance's held leases by client. The endpoint API is the same on Boot
 * 3.5 and Boot 4, so both lines register this one class ({@link LocksmithEndpointAutoConfiguration}).
 * Thread-safe; reading it never throws for a client that tracks nothing (its list is empty).
 */
@Endpoint(id = "locksmith")
public class LocksmithEndpoint {
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
