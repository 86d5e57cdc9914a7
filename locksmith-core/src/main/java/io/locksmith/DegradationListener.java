package io.locksmith;

/**
 * Told when a lock with a {@link DegradationPolicy} falls back to a JVM-local lock and when its backend
 * grants it again: the hook for metrics and alerts (a metrics module binds one; {@link
 * DegradationCounter} is a ready one that counts).
 *
 * <p>Called on the thread that completes the acquisition (the client's completion executor, or the
 * timer or event thread of the client), never while Locksmith holds an internal lock. Keep it short and
 * do not block: other acquisitions of the client complete on the same threads. An exception thrown by
 * a listener is logged and otherwise ignored; the acquisition is granted all the same. Implementations
 * must be thread-safe.
 */
public interface DegradationListener {

  /**
   * A lease was granted by the JVM-local lock because the backend could not be reached: the lease is
   * {@linkplain Lease#isDegraded() degraded}. Called once per degraded grant.
   *
   * @param lockName the lock's name (without the client's namespace)
   * @param cause why the backend was considered unreachable: the failure of its last attempt
   */
  void degraded(String lockName, BackendUnavailableException cause);

  /**
   * The backend granted a lock again whose previous grant in this JVM was degraded: from now on its
   * acquisitions use the backend. Called once per such return.
   *
   * @param lockName the lock's name (without the client's namespace)
   */
  default void restored(String lockName) {
  }
}
