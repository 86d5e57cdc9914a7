package io.locksmith.spring;

import io.locksmith.LockObserver;

/**
 * Makes the observer (metrics) of each auto-configured client. The starter defines one for Micrometer
 * when {@code locksmith-micrometer} and a {@code MeterRegistry} are present; an application may define its
 * own. Called once per client at start-up.
 */
@FunctionalInterface
public interface LockObserverFactory {

  /**
   * @param clientName {@code default} or the client's name under {@code locksmith.clients}
   * @param backend the backend's name ({@code in-jvm}, {@code redis}, {@code redlock}, {@code zookeeper},
   *     {@code jdbc})
   * @return the observer, or null for none
   */
  LockObserver observerFor(String clientName, String backend);
}
