package io.locksmith.spring;

import io.locksmith.LeaseSource.LockedCallable;
import io.locksmith.LeaseSource.LockedRunnable;
import io.locksmith.LockClient;
import java.time.Duration;

/**
 * Runs code under a distributed lock without the annotation. Each call takes the named exclusive lock
 * for the calling thread (re-entrant, like nested {@link DistributedLock} calls), runs the task, and
 * releases the lock in a {@code finally}; the task's own exceptions pass through unchanged.
 *
 * <p>Thread-safe; one bean serves the whole application.
 */
public final class LockTemplate {

  private final LockClients clients;
  private final String clientName;

  LockTemplate(LockClients clients, String clientName) {
    this.clients = clients;
    this.clientName = clientName;
  }

  /**
   * The same template on another client.
   *
   * @param clientName {@value LockClients#DEFAULT} or a name under {@code locksmith.clients}
   * @return a template that uses that client
   * @throws IllegalArgumentException if no client has that name
   */
  public LockTemplate onClient(String clientName) {
    clients.get(clientName);
    return new LockTemplate(clients, clientName);
  }

  /**
   * Runs {@code task} while holding lock {@code name}.
   *
   * @param name the lock name
   * @param wait how long to wait for the lock; zero tries once
   * @param task the work
   * @param <E> what the task may throw
   * @throws E whatever the task threw; the lock is released all the same
   * @throws io.locksmith.AcquireTimeoutException if the lock was not acquired in time; the task did not run
   * @throws io.locksmith.BackendUnavailableException if the backend could not be reached; the task did not run
   * @throws io.locksmith.AcquireInterruptedException if interrupted while waiting; the task did not run
   */
  public <E extends Exception> void runLocked(String name, Duration wait, LockedRunnable<E> task) throws E {
    client().lock(name).runLocked(wait, task);
  }

  /**
   * Calls {@code task} while holding lock {@code name} and returns its result.
   *
   * @param name the lock name
   * @param wait how long to wait for the lock; zero tries once
   * @param task the work
   * @param <T> the result type
   * @param <E> what the task may throw
   * @return what the task returned
   * @throws E whatever the task threw; the lock is released all the same
   * @throws io.locksmith.AcquireTimeoutException if the lock was not acquired in time; the task did not run
   * @throws io.locksmith.BackendUnavailableException if the backend could not be reached; the task did not run
   * @throws io.locksmith.AcquireInterruptedException if interrupted while waiting; the task did not run
   */
  public <T, E extends Exception> T callLocked(String name, Duration wait, LockedCallable<T, E> task) throws E {
    return client().lock(name).callLocked(wait, task);
  }

  private LockClient client() {
    return clients.forCalls(clientName);
  }
}
