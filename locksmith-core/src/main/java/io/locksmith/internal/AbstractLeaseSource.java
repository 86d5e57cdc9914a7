package io.locksmith.internal;

import io.locksmith.AcquireTimeoutException;
import io.locksmith.Lease;
import io.locksmith.LeaseSource;
import io.locksmith.LockObserver;
import io.locksmith.LockOptions;
import io.locksmith.spi.AcquireReply;
import io.locksmith.spi.LockOps;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;

/**
 * The lease view of every lock kind over the client's shared {@link Acquisition} machinery; subclasses
 * add the {@link java.util.concurrent.locks.Lock} view or a semaphore's operations.
 */
abstract class AbstractLeaseSource implements LeaseSource {
  final DefaultLockClient client;
  final LockOps ops;
  final String name;
  final LockOptions options;
  /** Told of each acquisition's outcome; null (nothing measured) unless the client options set one. */
  private final LockObserver observer;

  AbstractLeaseSource(DefaultLockClient client, LockOps ops, String name, LockOptions options) {
    this.client = client;
    this.ops = ops;
    this.name = name;
    this.options = options;
    this.observer = client.options().observer().orElse(null);
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public LockOptions options() {
    return options;
  }

  // ---------------------------------------------------------------- lease view

  @Override
  public Lease acquire() throws InterruptedException {
    checkInterrupt();
    Throwable site = client.acquisitionSite();
    // an unbounded wait only ends granted
    return client.publish(await(start(Long.MAX_VALUE, null, null), true).orElseThrow(), site);
  }

  @Override
  public Lease acquire(Duration wait) throws InterruptedException {
    long nanos = waitNanos(wait);
    checkInterrupt();
    Throwable site = client.acquisitionSite();
    Acquisition acquisition = begin(nanos, null, null);
    return client.publish(await(acquisition.result, true).orElseThrow(() -> timeout(wait, acquisition)), site);
  }

  @Override
  public Optional<Lease> tryAcquire() {
    Throwable site = client.acquisitionSite();
    try {
      return await(start(0, null, null), false).map(l -> client.publish(l, site));
    } catch (InterruptedException impossible) {
      throw new AssertionError(impossible);
    }
  }

  @Override
  public Optional<Lease> tryAcquire(Duration wait) throws InterruptedException {
    long nanos = waitNanos(wait);
    checkInterrupt();
    Throwable site = client.acquisitionSite();
    return await(start(nanos, null, null), true).map(l -> client.publish(l, site));
  }

  /**
   * An interruptible call made by an interrupted thread ends here, before anything is sent: an attempt
   * sent anyway could take the lock (using up a fencing token) only for the interrupt to give it back.
   * Like {@code lockInterruptibly}, it clears the interrupt status.
   */
  static void checkInterrupt() throws InterruptedException {
    if (Thread.interrupted()) {
      throw new InterruptedException();
    }
  }

  @Override
  public CompletionStage<Lease> acquireAsync(Duration wait) {
    long nanos = waitNanos(wait);
    Throwable site = client.acquisitionSite(); // here: the completion thread's stack would not say who asked
    Acquisition acquisition = begin(nanos, null, null);
    return linked(acquisition.result,
        lease -> client.publish(lease.orElseThrow(() -> timeout(wait, acquisition)), site));
  }

  @Override
  public CompletionStage<Optional<Lease>> tryAcquireAsync(Duration wait) {
    long nanos = waitNanos(wait);
    Throwable site = client.acquisitionSite();
    return linked(start(nanos, null, null), lease -> lease.map(l -> client.publish(l, site)));
  }

  /**
   * The timeout of {@link #acquire(Duration)} and {@link #acquireAsync}: names the kind of lock, and
   * what the backend said last (a semaphore's counts).
   *
   * @param lastReply the backend's last reply to the acquisition, or null
   */
  AcquireTimeoutException timeout(Duration wait, AcquireReply lastReply) {
    return new AcquireTimeoutException(name, wait);
  }

  private AcquireTimeoutException timeout(Duration wait, Acquisition acquisition) {
    return timeout(wait, acquisition.lastReply());
  }

  /** Sees every backend reply to this lock's acquisitions, on the delivering thread; must not block. */
  void observeReply(AcquireReply reply) {
  }

  static long waitNanos(Duration wait) {
    Objects.requireNonNull(wait, "wait");
    if (wait.isNegative()) {
      throw new IllegalArgumentException("wait must not be negative, was " + wait);
    }
    try {
      return wait.toNanos();
    } catch (ArithmeticException tooLong) {
      return Long.MAX_VALUE;
    }
  }

  /**
   * Starts an acquisition of this lock.
   *
   * @param key the Lock view's thread hold, or null for the lease view
   * @param owner the owner id to acquire as, or null for a new owner
   */
  final CompletableFuture<Optional<DefaultLease>> start(long waitNanos, DefaultLockClient.HoldKey key,
      String owner) {
    return begin(waitNanos, key, owner).result;
  }

  /** As {@link #start}, returning the acquisition itself (for what the backend replied). */
  final Acquisition begin(long waitNanos, DefaultLockClient.HoldKey key, String owner) {
    beforeAcquire();
    LockObserver o = observer;
    if (o == null) {
      return client.startAcquisition(ops, name, options, waitNanos, key, owner, this::observeReply);
    }
    long started = System.nanoTime();
    Acquisition acquisition = client.startAcquisition(ops, name, options, waitNanos, key, owner, this::observeReply);
    acquisition.result.whenComplete((granted, failure) -> Observers.acquireCompleted(o, name, kindName(),
        started, granted, failure));
    return acquisition;
  }

  /** @return the kind reported to a {@link LockObserver}: {@code semaphore} here, the lock's primitive in locks */
  String kindName() {
    return "semaphore";
  }

  /** Checks made before every acquisition; may throw to refuse it. */
  void beforeAcquire() {
  }

  /**
   * Blocks for an acquisition. An interrupt (if {@code interruptible}) cancels it — a grant racing
   * with the cancellation is given back — and is rethrown; otherwise it is restored on return.
   */
  final Optional<DefaultLease> await(CompletableFuture<Optional<DefaultLease>> result,
      boolean interruptible) throws InterruptedException {
    boolean interrupted = false;
    try {
      while (true) {
        try {
          return result.get();
        } catch (InterruptedException e) {
          if (interruptible) {
            if (!result.cancel(false)) {
              giveBackIfGranted(result); // granted between the interrupt and the cancel
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

  /**
   * Maps an acquisition's result for the async view, completing on the client's completion executor:
   * off the backend's I/O threads, so that dependent stages may make short blocking calls without
   * stalling the client, and off the common pool, which with parallelism 1 starts a thread per task.
   * Cancelling the returned future cancels the acquisition.
   */
  private <T> CompletableFuture<T> linked(CompletableFuture<Optional<DefaultLease>> source,
      java.util.function.Function<Optional<DefaultLease>, T> mapping) {
    CompletableFuture<T> out = new CompletableFuture<>();
    source.whenCompleteAsync((lease, failure) -> {
      if (failure != null) {
        out.completeExceptionally(failure instanceof CancellationException ? failure : Futures.unwrap(failure));
        return;
      }
      boolean delivered;
      try {
        delivered = out.complete(mapping.apply(lease));
      } catch (RuntimeException e) {
        delivered = out.completeExceptionally(e);
      }
      if (!delivered) {
        lease.ifPresent(client::giveBack); // the caller gave up first (cancel, orTimeout, …)
      }
    }, client.completions());
    out.whenComplete((v, failure) -> {
      if (failure != null) {
        source.cancel(false); // no-op once the source completed; then the handler above gives back
      }
    });
    return out;
  }

  private void giveBackIfGranted(CompletableFuture<Optional<DefaultLease>> result) {
    if (result.isDone() && !result.isCompletedExceptionally()) {
      result.join().ifPresent(client::giveBack);
    }
  }
}
