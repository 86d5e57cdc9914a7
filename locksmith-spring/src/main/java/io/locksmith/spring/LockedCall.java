package io.locksmith.spring;

import io.locksmith.Lease;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;

/**
 * The lease of the {@link DistributedLock @DistributedLock} call running on this thread, for fencing the
 * method's reads and writes with its token. Bound to the calling thread for the synchronous part of the
 * call (nested calls see their own lease, the outer one again after they return); a task the method hands
 * to another thread must take the token with it.
 *
 * <p>Thread-safe: each thread sees only its own calls.
 */
public final class LockedCall {

  private static final ThreadLocal<Deque<Lease>> CALLS = new ThreadLocal<>();

  private LockedCall() {}

  /**
   * The lease of the innermost locked call on this thread.
   *
   * @return the lease, or empty outside a locked call
   */
  public static Optional<Lease> currentLease() {
    Deque<Lease> calls = CALLS.get();
    return calls == null || calls.isEmpty() ? Optional.empty() : Optional.of(calls.peek());
  }

  /**
   * The fencing token of the innermost locked call on this thread.
   *
   * @return the token
   * @throws IllegalStateException if no locked call is running on this thread
   */
  public static long fencingToken() {
    return currentLease().orElseThrow(() -> new IllegalStateException(
        "no @DistributedLock call is running on this thread")).fencingToken();
  }

  static void push(Lease lease) {
    Deque<Lease> calls = CALLS.get();
    if (calls == null) {
      calls = new ArrayDeque<>();
      CALLS.set(calls);
    }
    calls.push(lease);
  }

  static void pop() {
    Deque<Lease> calls = CALLS.get();
    if (calls != null) {
      calls.poll();
      if (calls.isEmpty()) {
        CALLS.remove();
      }
    }
  }
}
