package io.locksmith;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeSet;

/**
 * Several exclusive locks of one {@link LockClient}, acquired as one: all of them or none, released
 * together. A transfer between two accounts locks both accounts' names with one {@code MultiLock}.
 *
 * <p><b>No deadlock.</b> The names are always acquired in one global order, ascending by
 * {@link String#compareTo} (UTF-16 code units), whatever order the caller gave them in. Two callers that
 * lock overlapping sets of names therefore never wait for each other in a cycle: whoever holds the
 * smallest contended name goes on, the other waits for it. The order is the same in every process, so
 * this holds across clients and JVMs. (Do not also take one of the names separately while holding a
 * {@code MultiLock}, or the other way round: that is a second order, and the guarantee is gone.)
 *
 * <p><b>All or nothing.</b> Each name is acquired with the rest of the caller's wait; if one of them is
 * not acquired before the wait runs out, or an acquisition fails (backend unreachable, interrupt, closed
 * client), the names already acquired are released before the call returns or throws. So a call that
 * returns without a {@link MultiLease} leaves nothing held. Names acquired earlier in the order are held
 * while later ones are waited for; that is what the order makes safe. If a name acquired early is lost
 * before the last one is granted (for instance a fixed lease shorter than the wait), everything is
 * released and the acquisition starts again with the rest of the wait.
 *
 * <p><b>Leases.</b> Each name gets an ordinary lease-view {@link Lease} with this lock's
 * {@link LockOptions}: a watched lease is renewed by the client like any other, and each carries its own
 * fencing token, which {@link MultiLease#fencingTokens()} exposes per name. Fence each resource with the
 * token of the name that protects it.
 *
 * <p><b>Waiting and outages</b> are those of {@link LeaseSource#tryAcquire(Duration)} for each name in
 * turn: a zero wait tries each name once; a positive wait rides out an outage until it runs out. A call
 * may take up to its wait plus one acquisition attempt per name.
 *
 * <p>Instances are immutable, thread-safe and cheap: create one per use or keep one.
 */
public final class MultiLock {
  private final LockClient client;
  private final List<String> names;
  private final LockOptions options;

  private MultiLock(LockClient client, List<String> names, LockOptions options) {
    this.client = client;
    this.names = names;
    this.options = options;
  }

  /**
   * The exclusive locks of {@code names} on {@code client}, with the client's default lease policy.
   *
   * @param client the client whose locks to take
   * @param names the lock names, in any order; at least one, no duplicates
   * @return the multi-lock
   * @throws NullPointerException if an argument or a name is null
   * @throws IllegalArgumentException if {@code names} is empty, has a duplicate, or has a name the client
   *     rejects (see {@link LockClient})
   * @throws IllegalStateException if the client is closed
   */
  public static MultiLock of(LockClient client, Collection<String> names) {
    Objects.requireNonNull(client, "client");
    return of(client, client.options().defaultLockOptions(), names);
  }

  /**
   * The exclusive locks of {@code names} on {@code client}, each with the lease policy {@code options}.
   *
   * @param client the client whose locks to take
   * @param options the lease policy of every member
   * @param names the lock names, in any order; at least one, no duplicates
   * @return the multi-lock
   * @throws NullPointerException if an argument or a name is null
   * @throws IllegalArgumentException if {@code names} is empty, has a duplicate, or has a name the client
   *     rejects (see {@link LockClient}), or the lease time does not suit the client
   * @throws IllegalStateException if the client is closed
   */
  public static MultiLock of(LockClient client, LockOptions options, Collection<String> names) {
    Objects.requireNonNull(client, "client");
    Objects.requireNonNull(options, "options");
    Objects.requireNonNull(names, "names");
    if (names.isEmpty()) {
      throw new IllegalArgumentException("a multi-lock needs at least one name");
    }
    TreeSet<String> ordered = new TreeSet<>();
    for (String name : names) {
      Objects.requireNonNull(name, "a lock name");
      if (!ordered.add(name)) {
        // a duplicate would wait for itself: each member is a separate owner
        throw new IllegalArgumentException("lock name '" + name + "' is given twice");
      }
    }
    for (String name : ordered) {
      client.lock(name, options); // validates the name and the options now, not at the first acquire
    }
    return new MultiLock(client, List.copyOf(ordered), options);
  }

  /** @return the names, in the order they are acquired (ascending) */
  public List<String> names() {
    return names;
  }

  /** @return the lease policy of every member */
  public LockOptions options() {
    return options;
  }

  /**
   * Tries each name once, without waiting.
   *
   * @return the multi-lease, or empty if another owner holds one of the names (nothing is then held)
   * @throws BackendUnavailableException if the backend cannot be reached (nothing is then held)
   * @throws IllegalStateException if the client is closed
   */
  public Optional<MultiLease> tryAcquire() {
    try {
      return Optional.ofNullable(attempt(0, false, true).lease);
    } catch (InterruptedException cannotHappen) { // tryAcquire() without a wait does not wait
      Thread.currentThread().interrupt();
      throw new AcquireInterruptedException(names.get(0), cannotHappen);
    }
  }

  /**
   * Waits at most {@code wait} for all the names.
   *
   * @param wait how long to wait in all; {@link Duration#ZERO} tries each name once
   * @return the multi-lease, or empty if some name stayed held by another owner for the rest of the wait
   *     (nothing is then held)
   * @throws InterruptedException if the thread was interrupted on entry or while waiting; nothing is then
   *     held, and the interrupt status is cleared
   * @throws BackendUnavailableException if the wait ran out while the backend could not be reached, or at
   *     once for a zero wait; nothing is then held
   * @throws NullPointerException if {@code wait} is null
   * @throws IllegalArgumentException if {@code wait} is negative
   * @throws IllegalStateException if the client is closed
   */
  public Optional<MultiLease> tryAcquire(Duration wait) throws InterruptedException {
    Objects.requireNonNull(wait, "wait");
    if (wait.isNegative()) {
      throw new IllegalArgumentException("wait must not be negative, was " + wait);
    }
    if (Thread.interrupted()) {
      throw new InterruptedException("interrupted before acquiring " + names);
    }
    long waitNanos = saturatedNanos(wait);
    long deadline = System.nanoTime() + waitNanos;
    while (true) {
      Attempt attempt = attempt(deadline, waitNanos == Long.MAX_VALUE, false);
      if (attempt.lease != null) {
        return Optional.of(attempt.lease);
      }
      if (!attempt.retry) {
        return Optional.empty();
      }
    }
  }

  /**
   * Waits at most {@code wait} for all the names.
   *
   * @param wait how long to wait in all; {@link Duration#ZERO} tries each name once
   * @return the multi-lease
   * @throws AcquireTimeoutException if some name stayed held by another owner for the rest of the wait
   *     (it names that lock); nothing is then held
   * @throws InterruptedException if the thread was interrupted on entry or while waiting; nothing is then
   *     held, and the interrupt status is cleared
   * @throws BackendUnavailableException if the wait ran out while the backend could not be reached, or at
   *     once for a zero wait; nothing is then held
   * @throws NullPointerException if {@code wait} is null
   * @throws IllegalArgumentException if {@code wait} is negative
   * @throws IllegalStateException if the client is closed
   */
  public MultiLease acquire(Duration wait) throws InterruptedException {
    Objects.requireNonNull(wait, "wait");
    if (wait.isNegative()) {
      throw new IllegalArgumentException("wait must not be negative, was " + wait);
    }
    if (Thread.interrupted()) {
      throw new InterruptedException("interrupted before acquiring " + names);
    }
    long waitNanos = saturatedNanos(wait);
    long deadline = System.nanoTime() + waitNanos;
    while (true) {
      Attempt attempt = attempt(deadline, waitNanos == Long.MAX_VALUE, false);
      if (attempt.lease != null) {
        return attempt.lease;
      }
      if (!attempt.retry) {
        throw new AcquireTimeoutException(attempt.missing, wait);
      }
    }
  }

  /** The outcome of one pass over the names: a lease, or the name not acquired and whether to go again. */
  private record Attempt(MultiLease lease, String missing, boolean retry) {}

  /**
   * @param once each name is tried once with {@code tryAcquire()}, which neither waits nor looks at the
   *     interrupt status
   */
  private Attempt attempt(long deadline, boolean unbounded, boolean once) throws InterruptedException {
    List<Lease> held = new ArrayList<>(names.size());
    try {
      for (String name : names) {
        long left = unbounded ? Long.MAX_VALUE : Math.max(0, deadline - System.nanoTime());
        DistributedLock lock = client.lock(name, options);
        Optional<Lease> lease = once ? lock.tryAcquire() : lock.tryAcquire(Duration.ofNanos(left));
        if (lease.isEmpty()) {
          releaseQuietly(held, null);
          return new Attempt(null, name, false);
        }
        held.add(lease.get());
      }
    } catch (InterruptedException | RuntimeException | Error e) {
      releaseQuietly(held, e);
      throw e;
    }
    for (Lease lease : held) {
      if (lease.state() == LeaseState.LOST) {
        // an early member expired while a later one was awaited: not all held at once, so start again
        releaseQuietly(held, null);
        boolean timeLeft = !once && (unbounded || deadline - System.nanoTime() > 0);
        return new Attempt(null, lease.lockName(), timeLeft);
      }
    }
    return new Attempt(new MultiLease(held), null, false);
  }

  /** Releases in reverse order; a failure is attached to {@code cause} or logged by the lease's close. */
  private static void releaseQuietly(List<Lease> held, Throwable cause) {
    for (int i = held.size() - 1; i >= 0; i--) {
      try {
        held.get(i).release();
      } catch (RuntimeException e) {
        if (cause != null) {
          cause.addSuppressed(e);
        }
        // otherwise the server lets it expire with its lease, as after a crash; nothing else to do
      }
    }
  }

  private static long saturatedNanos(Duration wait) {
    try {
      return wait.toNanos();
    } catch (ArithmeticException tooLong) {
      return Long.MAX_VALUE;
    }
  }

  @Override
  public String toString() {
    return "MultiLock" + names + " " + options;
  }
}
