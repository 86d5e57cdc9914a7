package io.locksmith.internal;

import io.locksmith.AcquireInterruptedException;
import io.locksmith.AcquireTimeoutException;
import io.locksmith.BackendUnavailableException;
import io.locksmith.DegradationPolicy;
import io.locksmith.DistributedLock;
import io.locksmith.Lease;
import io.locksmith.LeaseLostException;
import io.locksmith.LockException;
import io.locksmith.LockInfo;
import io.locksmith.LockKind;
import io.locksmith.LockOptions;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An exclusive lock with a {@link DegradationPolicy}: both views over the backend's lock, with a
 * JVM-local lock in front (see {@link LocalLocks}) that every acquisition takes first and that grants a
 * {@link DegradedLease} when the backend cannot be reached. The rules are the policy's javadoc; in short:
 *
 * <ol>
 *   <li>take the local permit of (namespace, name), within the caller's wait;
 *   <li>ask the backend, first for at most the grace (0: one attempt), then, while others hold the lock,
 *       in slices of {@code max(grace, 1 s)} until the wait runs out;
 *   <li>a step that ends in {@link BackendUnavailableException} degrades: the local permit becomes a
 *       degraded lease; any other failure gives the permit back and is thrown.
 * </ol>
 *
 * <p>The Lock view keeps its per-thread holds here (keyed by client, name and thread), re-entrant by a
 * local count: a re-entry does not ask the backend again. Thread-safe; cheap to create.
 */
final class DegradableLock implements ThreadLockView {
  private static final Logger log = LoggerFactory.getLogger(DegradableLock.class);
  /** Slices of a wait on the backend after the first step, at least: how soon a waiting call sees an outage. */
  static final long SLICE_NANOS = TimeUnit.SECONDS.toNanos(1);
  /** Keys whose last grant in this JVM was degraded: their next backend grant is reported as a return. */
  private static final ConcurrentHashMap<String, Boolean> DEGRADED = new ConcurrentHashMap<>();
  /** Lock-view holds of degradable locks. */
  private static final ConcurrentHashMap<ThreadHold, LocalLease> THREAD_HOLDS = new ConcurrentHashMap<>();

  private record ThreadHold(String clientId, String key, Thread thread) {}

  private final DefaultLockClient client;
  private final DistributedLock remote;
  private final DegradationPolicy policy;
  private final String key;

  DegradableLock(DefaultLockClient client, DistributedLock remote, DegradationPolicy policy) {
    this.client = client;
    this.remote = remote;
    this.policy = policy;
    this.key = client.options().namespace() + '\u0000' + remote.name();
  }

  DefaultLockClient client() {
    return client;
  }

  @Override
  public String name() {
    return remote.name();
  }

  @Override
  public LockOptions options() {
    return remote.options();
  }

  // ---------------------------------------------------------------- the acquisition

  /** Starts an acquisition; cancelling the result abandons it (a grant racing with that is given back). */
  private CompletableFuture<Optional<LocalLease>> start(long waitNanos) {
    client.ensureOpen();
    boolean unbounded = waitNanos == Long.MAX_VALUE;
    long deadline = System.nanoTime() + (unbounded ? 0 : waitNanos);
    CompletableFuture<Optional<LocalLease>> result = new CompletableFuture<>();
    AtomicReference<CompletableFuture<?>> inFlight = new AtomicReference<>();
    CompletableFuture<Boolean> local = LocalLocks.acquire(key, waitNanos, client);
    result.whenComplete((v, failure) -> {
      if (failure != null) { // cancelled: stop waiting wherever the acquisition is
        LocalLocks.abandon(key, local);
        CompletableFuture<?> attempt = inFlight.get();
        if (attempt != null) {
          attempt.cancel(false);
        }
      }
    });
    local.whenComplete((granted, failure) -> {
      if (!Boolean.TRUE.equals(granted)) {
        result.complete(Optional.empty()); // held by another owner in this JVM for the whole wait
        return;
      }
      LocalLease.Permit permit = new LocalLease.Permit(key);
      if (result.isDone()) {
        permit.free();
        return;
      }
      ask(result, inFlight, permit, deadline, unbounded, true);
    });
    return result;
  }

  /** One step on the backend, holding the local permit; see the class comment. */
  private void ask(CompletableFuture<Optional<LocalLease>> result, AtomicReference<CompletableFuture<?>> inFlight,
      LocalLease.Permit permit, long deadline, boolean unbounded, boolean first) {
    long left = unbounded ? Long.MAX_VALUE : Math.max(0, deadline - System.nanoTime());
    long grace = policy.grace().toNanos();
    long budget = first ? Math.min(left, grace) : Math.min(left, Math.max(grace, SLICE_NANOS));
    CompletableFuture<Optional<Lease>> attempt;
    try {
      attempt = remote.tryAcquireAsync(Duration.ofNanos(budget)).toCompletableFuture();
    } catch (RuntimeException e) {
      permit.free();
      result.completeExceptionally(e);
      return;
    }
    inFlight.set(attempt);
    if (result.isDone()) {
      attempt.cancel(false); // the caller gave up while this step was being sent
    }
    attempt.whenComplete((lease, failure) -> {
      if (failure != null) {
        Throwable cause = unwrap(failure);
        if (cause instanceof BackendUnavailableException down && !result.isDone()) {
          grantDegraded(result, permit, down);
        } else {
          permit.free();
          result.completeExceptionally(cause); // a no-op if the caller gave up (cancellation)
        }
        return;
      }
      if (lease.isPresent()) {
        BackendLease mine = new BackendLease(this, permit, lease.get());
        backendGranted(); // before the caller sees the lease, so that a listener's count is never behind it
        if (!result.complete(Optional.of(mine))) {
          mine.close(); // the caller gave up first
        }
        return;
      }
      if (result.isDone() || (!unbounded && deadline - System.nanoTime() <= 0)) {
        permit.free();
        result.complete(Optional.empty());
        return;
      }
      ask(result, inFlight, permit, deadline, unbounded, false);
    });
  }

  private void grantDegraded(CompletableFuture<Optional<LocalLease>> result, LocalLease.Permit permit,
      BackendUnavailableException cause) {
    DegradedLease lease;
    try {
      lease = new DegradedLease(this, permit);
    } catch (RuntimeException e) {
      permit.free();
      result.completeExceptionally(e);
      return;
    }
    announceDegraded(cause); // before the caller sees the lease, so that a listener's count is never behind it
    if (!result.complete(Optional.of(lease))) {
      lease.release(); // the caller gave up first; the grant was made and counted all the same
    }
  }

  private void announceDegraded(BackendUnavailableException cause) {
    if (DEGRADED.put(key, Boolean.TRUE) == null) {
      log.warn("lock '{}': the backend is unreachable ({}); granted a DEGRADED lease from a JVM-local lock, as "
          + "the lock's degradation policy allows. It excludes holders in this JVM only and carries no fencing "
          + "token. Further degraded grants of this lock are logged at DEBUG until the backend grants it again",
          name(), cause.getMessage());
    } else {
      log.debug("lock '{}': backend unreachable ({}); degraded grant", name(), cause.getMessage());
    }
    try {
      policy.listener().degraded(name(), cause);
    } catch (RuntimeException e) {
      log.warn("a degradation listener threw; ignored", e);
    }
    client.options().observer().ifPresent(o -> {
      try {
        o.degradedGrant(name(), cause);
      } catch (RuntimeException e) {
        log.warn("lock observer {} failed on a degraded grant of '{}'", o, name(), e);
      }
    });
  }

  private void backendGranted() {
    if (!DEGRADED.isEmpty() && DEGRADED.remove(key) != null) {
      log.warn("lock '{}' is granted by the backend again; its degraded (JVM-local) grants have ended", name());
      try {
        policy.listener().restored(name());
      } catch (RuntimeException e) {
        log.warn("a degradation listener threw; ignored", e);
      }
    }
  }

  private static Throwable unwrap(Throwable t) {
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  /**
   * Blocks for an acquisition. An interrupt (if {@code interruptible}) abandons it and is rethrown;
   * otherwise it is restored on return.
   */
  private static Optional<LocalLease> await(CompletableFuture<Optional<LocalLease>> result, boolean interruptible)
      throws InterruptedException {
    boolean interrupted = false;
    try {
      while (true) {
        try {
          return result.get();
        } catch (InterruptedException e) {
          if (interruptible) {
            if (!result.cancel(false) && result.isDone() && !result.isCompletedExceptionally()) {
              result.join().ifPresent(LocalLease::close); // granted between the interrupt and the cancel
            }
            throw e;
          }
          interrupted = true;
        } catch (ExecutionException e) {
          throw Futures.unwrap(e.getCause());
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Completes the caller's stage on the client's completion executor; cancelling it abandons the source. */
  private <T> CompletableFuture<T> linked(CompletableFuture<Optional<LocalLease>> source,
      Function<Optional<LocalLease>, T> mapping) {
    CompletableFuture<T> out = new CompletableFuture<>();
    source.whenCompleteAsync((lease, failure) -> {
      if (failure != null) {
        out.completeExceptionally(failure instanceof CancellationException ? failure : unwrap(failure));
        return;
      }
      boolean delivered;
      try {
        delivered = out.complete(mapping.apply(lease));
      } catch (RuntimeException e) {
        delivered = out.completeExceptionally(e);
      }
      if (!delivered) {
        lease.ifPresent(LocalLease::close);
      }
    }, client.completions());
    out.whenComplete((v, failure) -> {
      if (failure != null) {
        source.cancel(false);
      }
    });
    return out;
  }

  private AcquireTimeoutException timeout(Duration wait) {
    return new AcquireTimeoutException(name(), LockKind.EXCLUSIVE, wait, "exclusive lock '" + name()
        + "' was not acquired within " + wait + ": another owner held it");
  }

  private static void checkInterrupt() throws InterruptedException {
    if (Thread.interrupted()) {
      throw new InterruptedException();
    }
  }

  // ---------------------------------------------------------------- lease view

  @Override
  public Lease acquire() throws InterruptedException {
    checkInterrupt();
    return await(start(Long.MAX_VALUE), true).orElseThrow();
  }

  @Override
  public Lease acquire(Duration wait) throws InterruptedException {
    long nanos = AbstractLeaseSource.waitNanos(wait);
    checkInterrupt();
    return await(start(nanos), true).orElseThrow(() -> timeout(wait));
  }

  @Override
  public Optional<Lease> tryAcquire() {
    try {
      return await(start(0), false).map(l -> l);
    } catch (InterruptedException impossible) {
      throw new AssertionError(impossible);
    }
  }

  @Override
  public Optional<Lease> tryAcquire(Duration wait) throws InterruptedException {
    long nanos = AbstractLeaseSource.waitNanos(wait);
    checkInterrupt();
    return await(start(nanos), true).map(l -> l);
  }

  @Override
  public CompletionStage<Lease> acquireAsync(Duration wait) {
    long nanos = AbstractLeaseSource.waitNanos(wait);
    return linked(start(nanos), lease -> lease.orElseThrow(() -> timeout(wait)));
  }

  @Override
  public CompletionStage<Optional<Lease>> tryAcquireAsync(Duration wait) {
    long nanos = AbstractLeaseSource.waitNanos(wait);
    return linked(start(nanos), lease -> lease.map(l -> l));
  }

  // ---------------------------------------------------------------- Lock view

  private ThreadHold threadHold() {
    return new ThreadHold(client.clientId(), key, Thread.currentThread());
  }

  @Override
  public boolean lockForThread(long waitNanos, boolean interruptible) throws InterruptedException {
    ThreadHold hold = threadHold();
    LocalLease held = THREAD_HOLDS.get(hold);
    if (held != null) {
      if (held.state().isFinal()) {
        throw new LeaseLostException(name(), "this thread's hold was lost; unlock and lock again");
      }
      held.holds.incrementAndGet();
      return true;
    }
    Optional<LocalLease> lease = await(start(waitNanos), interruptible);
    lease.ifPresent(l -> THREAD_HOLDS.put(hold, l));
    return lease.isPresent();
  }

  @Override
  public void unlock() {
    ThreadHold hold = threadHold();
    LocalLease lease = THREAD_HOLDS.get(hold);
    if (lease == null) {
      throw new IllegalMonitorStateException(
          "lock '" + name() + "' is not held by thread " + Thread.currentThread().getName());
    }
    if (lease.state().isFinal()) {
      if (lease.holds.decrementAndGet() <= 0) {
        THREAD_HOLDS.remove(hold, lease);
        lease.close();
      }
      throw new LeaseLostException(name(), "it was lost while this thread held it");
    }
    if (lease.holds.get() > 1) {
      lease.holds.decrementAndGet();
      return;
    }
    THREAD_HOLDS.remove(hold, lease);
    if (!lease.release()) {
      throw new LeaseLostException(name(), "it was lost while this thread held it");
    }
  }

  @Override
  public boolean isHeldByCurrentThread() {
    LocalLease lease = THREAD_HOLDS.get(threadHold());
    return lease != null && !lease.state().isFinal();
  }

  @Override
  public int getHoldCount() {
    LocalLease lease = THREAD_HOLDS.get(threadHold());
    return lease == null ? 0 : lease.holdCount();
  }

  @Override
  public Optional<Lease> currentThreadLease() {
    return Optional.ofNullable(THREAD_HOLDS.get(threadHold()));
  }

  @Override
  public <E extends Exception> void runLocked(Duration wait, LockedRunnable<E> task) throws E {
    Objects.requireNonNull(task, "task");
    callLocked(wait, () -> {
      task.run();
      return null;
    });
  }

  @Override
  public <T, E extends Exception> T callLocked(Duration wait, LockedCallable<T, E> task) throws E {
    Objects.requireNonNull(task, "task");
    long nanos = AbstractLeaseSource.waitNanos(wait);
    boolean locked;
    try {
      checkInterrupt();
      locked = lockForThread(nanos, true);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AcquireInterruptedException(name(), e);
    }
    if (!locked) {
      throw timeout(wait);
    }
    try {
      return task.call();
    } finally {
      try {
        unlock();
      } catch (LockException e) {
        log.warn("lock '{}': unlock after the task failed: {}", name(), e.getMessage());
      }
    }
  }

  // ---------------------------------------------------------------- operators

  @Override
  public Optional<LockInfo> inspect() {
    return remote.inspect();
  }

  @Override
  public boolean forceUnlock() {
    return remote.forceUnlock();
  }

  @Override
  public String toString() {
    return "DistributedLock[EXCLUSIVE " + name() + ", " + options() + "]";
  }
}
