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
 */
public record BackendContext(String clientId, String namespace, WakeupSink wakeups, String clientName) {
  /** @throws NullPointerException if a component other than {@code clientName} is null */
  public BackendContext {
    Objects.requireNonNull(clientId, "clientId");
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(wakeups, "wakeups");
  }

  /**
   * A context for a client without a name.
   *
   * @param clientId see the record components
   * @param namespace see the record components
   * @param wakeups see the record components
   * @throws NullPointerException if an argument is null
   */
  public BackendContext(String clientId, String namespace, WakeupSink wakeups) {
    this(clientId, namespace, wakeups, null);
  }
}
