package io.locksmith;

/**
 * Told about the state changes of one {@link Lease}. Called on the client's event thread, never on a
 * backend I/O thread and never while Locksmith holds an internal lock, so it may block briefly or
 * call back into Locksmith; a slow listener delays only other listeners of the same client. An
 * exception thrown by a listener is logged and otherwise ignored.
 */
@FunctionalInterface
public interface LeaseListener {
  /**
   * @param lease the lease whose state changed
   * @param from the previous state
   * @param to the new state
   */
  void stateChanged(Lease lease, LeaseState from, LeaseState to);
}
