package io.locksmith.spring;

import io.locksmith.LockClient;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.BiFunction;

/**
 * The lock clients of this application by name: {@value #DEFAULT} for the primary {@link LockClient} bean
 * (when there is one) and one per {@code locksmith.clients.<name>} entry. {@link DistributedLock#client()}
 * and {@link LockTemplate} look clients up here.
 *
 * <p>Immutable after start-up and thread-safe. It closes the named clients it built when the context
 * closes; the primary client is a bean of its own and is closed by Spring.
 */
public final class LockClients implements AutoCloseable {

  /** The name of the primary client. */
  public static final String DEFAULT = "default";

  private final Map<String, LockClient> clients;
  private final Map<String, LockClient> forCalls;
  private final Set<String> owned;

  LockClients(LockClient primary, Map<String, LockClient> named) {
    this(primary, named, (name, client) -> client);
  }

  /**
   * @param observed the view of a client that {@code @DistributedLock} and {@link LockTemplate} use (observed
   *     waits), by name; the clients themselves are handed out unchanged, so that an application may still cast
   *     one to its backend's type
   */
  LockClients(LockClient primary, Map<String, LockClient> named, BiFunction<String, LockClient, LockClient> observed) {
    Map<String, LockClient> all = new LinkedHashMap<>();
    if (primary != null) {
      all.put(DEFAULT, primary);
    }
    all.putAll(named);
    this.clients = Collections.unmodifiableMap(all);
    Map<String, LockClient> views = new LinkedHashMap<>();
    all.forEach((name, client) -> views.put(name, observed.apply(name, client)));
    this.forCalls = Map.copyOf(views);
    this.owned = Set.copyOf(named.keySet());
  }

  /** The client of this name as the starter's own calls use it; fails as {@link #get(String)}. */
  LockClient forCalls(String name) {
    get(name);
    return forCalls.get(name);
  }

  /**
   * The client of this name.
   *
   * @param name {@value #DEFAULT} or a name under {@code locksmith.clients}
   * @return the client
   * @throws IllegalArgumentException if there is no client of that name (the message lists those there
   *     are)
   */
  public LockClient get(String name) {
    LockClient client = clients.get(name);
    if (client == null) {
      throw new IllegalArgumentException("no lock client named '" + name + "'; configured: " + clients.keySet()
          + (clients.containsKey(DEFAULT) ? "" : " (no primary client: set locksmith.backend or a backend's address)"));
    }
    return client;
  }

  /**
   * The primary client, if one is configured.
   *
   * @return the primary client
   */
  public Optional<LockClient> primary() {
    return Optional.ofNullable(clients.get(DEFAULT));
  }

  /**
   * Every client by name, the primary one first.
   *
   * @return an unmodifiable map
   */
  public Map<String, LockClient> all() {
    return clients;
  }

  /** Closes the named clients this registry built; never throws. */
  @Override
  public void close() {
    for (String name : owned) {
      try {
        clients.get(name).close();
      } catch (RuntimeException e) {
        org.slf4j.LoggerFactory.getLogger(LockClients.class).warn("closing lock client '{}' failed", name, e);
      }
    }
  }
}
