package io.locksmith.spi;

import java.util.Objects;

/**
 * What a client gives its backend at {@link LockBackend#open(BackendContext)}.
 *
 * @param clientId the client's id, unique per client instance; owner and waiter ids start with it
 *     followed by {@code ':'}
 * @param namespace prefix for every key the backend writes
 * @param wakeups where to deliver wake-ups
 */
public record BackendContext(String clientId, String namespace, WakeupSink wakeups) {
  /** @throws NullPointerException if a component is null */
  public BackendContext {
    Objects.requireNonNull(clientId, "clientId");
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(wakeups, "wakeups");
  }
}
