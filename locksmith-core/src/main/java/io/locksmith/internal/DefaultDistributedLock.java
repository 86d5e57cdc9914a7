package io.locksmith.internal;

import io.locksmith.AcquireTimeoutException;
import io.locksmith.DistributedLock;
import io.locksmith.Lease;
import io.locksmith.LockOptions;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;

/** Both views of one named lock over the client's shared {@link Acquisition} machinery. */
final class DefaultDistributedLock implements DistributedLock {
  private final DefaultLockClient client;
  private final String name;
  private final LockOptions options;

  DefaultDistributedLock(DefaultLockClient client, String name, LockOptions options) {
    this.client = client;
    this.name = name;
    this.options = options;
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
    return await(start(Long.MAX_VALUE, null), true).orElseThrow(); // an unbounded wait only ends granted
  }

  @Override
  public Lease acquire(Duration wait) throws InterruptedException {
    return await(start(waitNanos(wait), null), true)
        .orElseThrow(() -> new AcquireTimeoutException(name, wait));
  }

  @Override
  public Optional<Lease> tryAcquire() {
    try {
      return await(start(0, null), false).map(l -> l);
    } catch (InterruptedException impossible) {
      throw new AssertionError(impossible);
    }
  }

  @Override
  public Optional<Lease> tryAcquire(Duration wait) throws InterruptedException {
    return await(start(waitNanos(wait), null), true).map(l -> l);
  }

  @Override
  public CompletionStage<Lease> acquireAsync(Duration wait) {
    long nanos = waitNanos(wait);
    return linked(start(nanos, null), lease -> lease.orElseThrow(() -> new AcquireTimeoutException(name, wait)));
  }

  @Override
  public CompletionStage<Optional<Lease>> tryAcquireAsync(Duration wait) {
    return linked(start(waitNanos(wait), null), lease -> lease.map(l -> l));
  }

  // ---------------------------------------------------------------- Lock view

  @Override
  public void lock() {
    try {
      lockForThread(Long.MAX_VALUE, false);
    } catch (InterruptedException impossible) {
      throw new AssertionError(impossible);
    }
  }

  @Override
  public void lockInterruptibly() throws InterruptedException {
    if (Thread.interrupted()) {
      throw new InterruptedException();
    }
    lockForThread(Long.MAX_VALUE, true);
  }

  @Override
  public boolean tryLock() {
    try {
      return lockForThread(0, false);
    } catch (InterruptedException impossible) {
      throw new AssertionError(impossible);
    }
  }

  @Override
  public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
    Objects.requireNonNull(unit, "unit");
    if (time < 0) {
      throw new IllegalArgumentException("wait must not be negative, was " + time + " " + unit);
    }
    if (Thread.interrupted()) {
      throw new InterruptedException();
    }
    return lockForThread(unit.toNanos(time), true);
  }

  @Override
  public void unlock() {
    DefaultLease lease = client.threadLease(name);
    if (lease == null) {
      throw new IllegalMonitorStateException(
          "lock '" + name + "' is not held by thread " + Thread.currentThread().getName());
    }
    client.unlockOne(lease);
  }

  @Override
  public boolean isHeldByCurrentThread() {
    DefaultLease lease = client.threadLease(name);
    return lease != null && !lease.state().isFinal();
  }

  @Override
  public int getHoldCount() {
    DefaultLease lease = client.threadLease(name);
    return lease == null ? 0 : lease.holdCount();
  }

  @Override
  public Optional<Lease> currentThreadLease() {
    return Optional.ofNullable(client.threadLease(name));
  }

  @Override
  public String toString() {
    return "DistributedLock[" + name + ", " + options + "]";
  }

  // ---------------------------------------------------------------- shared

  private boolean lockForThread(long waitNanos, boolean interruptible) throws InterruptedException {
    DefaultLease held = client.threadLease(name);
    if (held != null) {
      client.reenter(held);
      return true;
    }
    DefaultLockClient.HoldKey key = new DefaultLockClient.HoldKey(name, Thread.currentThread());
    Optional<DefaultLease> lease = await(start(waitNanos, key), interruptible);
    lease.ifPresent(client::registerThreadHold);
    return lease.isPresent();
  }

  private static long waitNanos(Duration wait) {
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

  private CompletableFuture<Optional<DefaultLease>> start(long waitNanos, DefaultLockClient.HoldKey key) {
    return client.startAcquisition(name, options, waitNanos, key).result;
  }

  /**
   * Blocks for an acquisition. An interrupt (if {@code interruptible}) cancels it — a grant racing
   * with the cancellation is given back — and is rethrown; otherwise it is restored on return.
   */
  private Optional<DefaultLease> await(CompletableFuture<Optional<DefaultLease>> result,
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
   * Maps an acquisition's result for the async view, completing off the backend's I/O threads so that
   * dependent stages may block (release the lease, call the lock again) without stalling the client;
   * cancelling the returned future cancels the acquisition.
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
    }, ForkJoinPool.commonPool());
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
