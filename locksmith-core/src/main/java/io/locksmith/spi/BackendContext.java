package io.locksmith.spi;

import java.util.Objects;

/**
 * What a client gives its backend at {@link LockBackend#open(BackendContext)}.
 *
 * @param clientId the client's id, unique per client instance; owner and waiter ids start with it
 *     followed by {@code ':'}
 * @param namespace prefix for every key the backend writes
 * @param wakeups where to deliver wake-ups
 * @param clientName the name the client was given ({@link io.locksmith.ClientOptions#clientName()}),
 *     or {@code null}; a backend that can name its connections should use it together with the client
 *     id, so that operators can find the process behind an owner id
 * @param events where to report what the backend observes about the client's leases (connection
 *     dropped and back, holds removed by others); {@link BackendEvents#NONE} when nobody listens
 */
public record BackendContext(String clientId, String namespace, WakeupSink wakeups, String clientName,
    BackendEvents events) {
  /** @throws NullPointerException if a component other than {@code clientName} is null */
  public BackendContext {
    Objects.requireNonNull(clientId, "clientId");
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(wakeups, "wakeups");
    Objects.requireNonNull(events, "events");
  }

  /**
   * A context whose events nobody hears ({@link BackendEvents#NONE}).
   *
   * @param clientId see the record components
   * @param namespace see the record components
   * @param wakeups see the record components
   * @param clientName see the record components
   * @throws NullPointerException if an argument other than {@code clientName} is null
   */
  public BackendContext(String clientId, String namespace, WakeupSink wakeups, String clientName) {
    this(clientId, namespace, wakeups, clientName, BackendEvents.NONE);
  }

  /**
   * A context for a client without a name, whose events nobody hears.
   *
   * @param clientId see the record components
   * @param namespace see the record components
   * @param wakeups see the record components
   * @throws NullPointerException if an argument is null
   */
  public BackendContext(String clientId, String namespace, WakeupSink wakeups) {
    this(clientId, namespace, wakeups, null);
  }

  /**
   * @param replacement the events to report to instead
   * @return this context with other events (a backend built of several others, e.g. Redlock, gives each
   *     part its own, to combine them)
   * @throws NullPointerException if {@code replacement} is null
   */
  public BackendContext withEvents(BackendEvents replacement) {
    return new BackendContext(clientId, namespace, wakeups, clientName, replacement);
  }
}
