package io.locksmith;

import java.util.Optional;

/**
 * One connection to a lock backend, handing out {@link DistributedLock}s by name. Create one per
 * backend and share it: it is thread-safe and expensive (connections, a renewal scheduler and an event
 * thread). Close it when done (see {@link #close()}): every thread it started ends.
 *
 * <p>Lock names are validated: non-null, not blank, at most {@link ClientOptions#maxNameLength()}
 * characters counted as Unicode code points, no control characters and no unpaired UTF-16 surrogates
 * (which are not characters and have no UTF-8 form, so an encoding backend would merge them with other
 * names). Anything else is accepted, case-sensitively. They are stored under the client's {@linkplain ClientOptions#namespace() namespace} and
 * never reach the backend as code.
 */
public interface LockClient extends AutoCloseable {

  /**
   * @param name the lock name
   * @return the exclusive re-entrant lock of that name with the client's default lease policy
   * @throws NullPointerException if {@code name} is null
   * @throws IllegalArgumentException if {@code name} is not a valid lock name (see above)
   * @throws IllegalStateException if the client is closed
   */
  DistributedLock lock(String name);

  /**
   * @param name the lock name
   * @param options the lease policy of this lock object
   * @return the exclusive re-entrant lock of that name
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code name} is not a valid lock name (see above), or the lease time is not
   *     longer than the client's clock-drift plus scheduling allowance for it
   *     ({@link ClientOptions#validityMarginFor})
   * @throws IllegalStateException if the client is closed
   */
  DistributedLock lock(String name, LockOptions options);

  /**
   * A lock granted in arrival order: waiters are queued by the backend's clock, each release wakes only
   * the next waiter, and a waiter that dies or gives up loses its place after the backend's queue
   * timeout at most (a live waiter keeps its place by refreshing it). A caller that does not wait (for instance
   * {@link DistributedLock#tryAcquire()}) gets the lock only when nobody is queued.
   *
   * @param name the lock name
   * @return the fair lock of that name with the client's default lease policy
   * @throws UnsupportedOperationException if {@link #capabilities()} lacks {@link LockKind#FAIR}
   * @throws NullPointerException if {@code name} is null
   * @throws IllegalArgumentException if {@code name} is not a valid lock name (see above)
   * @throws IllegalStateException if the client is closed
   */
  default DistributedLock fairLock(String name) {
    return fairLock(name, options().defaultLockOptions());
  }

  /**
   * @param name the lock name
   * @param options the lease policy of this lock object
   * @return the fair lock of that name; see {@link #fairLock(String)}
   * @throws UnsupportedOperationException if {@link #capabilities()} lacks {@link LockKind#FAIR}
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code name} is not a valid lock name (see above), or the lease time is not
   *     longer than the client's clock-drift plus scheduling allowance for it
   *     ({@link ClientOptions#validityMarginFor})
   * @throws IllegalStateException if the client is closed
   */
  DistributedLock fairLock(String name, LockOptions options);

  /**
   * @param name the lock name
   * @return the read-write lock of that name with the client's default lease policy
   * @throws UnsupportedOperationException if {@link #capabilities()} lacks {@link LockKind#READ_WRITE}
   * @throws NullPointerException if {@code name} is null
   * @throws IllegalArgumentException if {@code name} is not a valid lock name (see above)
   * @throws IllegalStateException if the client is closed
   */
  default DistributedReadWriteLock readWriteLock(String name) {
    return readWriteLock(name, options().defaultLockOptions());
  }

  /**
   * @param name the lock name
   * @param options the lease policy of both sides
   * @return the read-write lock of that name
   * @throws UnsupportedOperationException if {@link #capabilities()} lacks {@link LockKind#READ_WRITE}
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code name} is not a valid lock name (see above), or the lease time is not
   *     longer than the client's clock-drift plus scheduling allowance for it
   *     ({@link ClientOptions#validityMarginFor})
   * @throws IllegalStateException if the client is closed
   */
  DistributedReadWriteLock readWriteLock(String name, LockOptions options);

  /**
   * @param name the semaphore name
   * @param permits the permit count to store if none is stored yet
   * @return the semaphore of that name with the client's default lease policy
   * @throws UnsupportedOperationException if {@link #capabilities()} lacks {@link LockKind#SEMAPHORE}
   * @throws NullPointerException if {@code name} is null
   * @throws IllegalArgumentException if {@code name} is not a valid lock name (see above), or {@code permits} &lt; 1
   * @throws IllegalStateException if the client is closed
   */
  default DistributedSemaphore semaphore(String name, int permits) {
    return semaphore(name, permits, options().defaultLockOptions());
  }

  /**
   * @param name the semaphore name
   * @param permits the permit count to store if none is stored yet
   * @param options the lease policy of each permit
   * @return the semaphore of that name
   * @throws UnsupportedOperationException if {@link #capabilities()} lacks {@link LockKind#SEMAPHORE}
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code name} is not a valid lock name (see above), {@code permits} &lt; 1, or
   *     the lease time is not longer than the client's clock-drift plus scheduling allowance for it
   *     ({@link ClientOptions#validityMarginFor})
   * @throws IllegalStateException if the client is closed
   */
  DistributedSemaphore semaphore(String name, int permits, LockOptions options);

  /**
   * Several exclusive locks acquired as one, in a global order so that callers never deadlock; see
   * {@link MultiLock}. The same as {@code MultiLock.of(this, List.of(names))}.
   *
   * @param names the lock names, in any order; at least one, no duplicates
   * @return the multi-lock, with the client's default lease policy
   * @throws NullPointerException if {@code names} or a name is null
   * @throws IllegalArgumentException if there is no name, a duplicate, or a name that is not valid (see
   *     above)
   * @throws IllegalStateException if the client is closed
   */
  default MultiLock multiLock(String... names) {
    return MultiLock.of(this, java.util.Arrays.asList(names));
  }

  /** @return what this client's backend offers */
  Capabilities capabilities();

  /** @return the options this client was built with */
  ClientOptions options();

  /**
   * @return this client's id, random per instance: every owner id it writes to the backend starts with
   *     it ({@code <clientId>:<seq>}, then {@code @<clientName>} if {@link ClientOptions#clientName()} is
   *     set)
   */
  String clientId();

  /**
   * Reads who holds a lock, for operators.
   *
   * @param name the lock name
   * @return the holder, or empty if the lock is free
   * @throws BackendUnavailableException if the backend cannot be reached
   * @throws NullPointerException if {@code name} is null
   * @throws IllegalArgumentException if {@code name} is not a valid lock name (see above)
   */
  Optional<LockInfo> inspect(String name);

  /**
   * Reads a semaphore as the backend stores it, for operators: the stored permit count (empty if none is
   * stored), each permit's holder with its fencing token and time left, and the waiters. Unlike {@link
   * #semaphore(String, int)}, this declares no count, so it neither stores one nor logs that a declared
   * count differs from the one in force.
   *
   * @param name the semaphore name
   * @return the snapshot; {@link SemaphoreState#isEmpty()} if the backend keeps nothing for the name
   * @throws UnsupportedOperationException if {@link #capabilities()} lacks {@link LockKind#SEMAPHORE}
   * @throws BackendUnavailableException if the backend cannot be reached
   * @throws NullPointerException if {@code name} is null
   * @throws IllegalArgumentException if {@code name} is not a valid lock name (see above)
   * @throws IllegalStateException if the client is closed
   */
  SemaphoreState inspectSemaphore(String name);

  /**
   * Deletes a lock whoever holds it, for operators clearing a lock a dead process left behind. The
   * holder, if alive, is told by a backend that can tell it (Redis, Redlock, in-JVM), and its lease is
   * {@link LeaseState#LOST} at once; otherwise it finds out at its next renewal. One waiter is woken.
   *
   * @param name the lock name
   * @return whether a lock was deleted
   * @throws BackendUnavailableException if the backend cannot be reached
   * @throws NullPointerException if {@code name} is null
   * @throws IllegalArgumentException if {@code name} is not a valid lock name (see above)
   */
  boolean forceUnlock(String name);

  /**
   * Closes the client: pending acquisitions fail with {@link IllegalStateException}, held leases are
   * released (all at once), and grants still in flight are given back, waiting at most 5 seconds in
   * all; then connections and threads end. Idempotent; never throws.
   */
  @Override
  void close();
}
