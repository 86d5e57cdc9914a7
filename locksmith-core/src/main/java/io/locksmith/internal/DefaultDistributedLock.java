package io.locksmith.internal;

import io.locksmith.AcquireInterruptedException;
import io.locksmith.AcquireTimeoutException;
import io.locksmith.DistributedLock;
import io.locksmith.DistributedReadWriteLock;
import io.locksmith.Lease;
import io.locksmith.LeaseLostException;
import io.locksmith.LockException;
import io.locksmith.LockInfo;
import io.locksmith.LockKind;
import io.locksmith.LockOptions;
import io.locksmith.spi.AcquireReply;
import io.locksmith.spi.LockOps;
import io.locksmith.spi.Primitive;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * Both views of one named lock of one primitive (exclusive, fair, or a side of a read-write lock).
 */
final class DefaultDistributedLock extends AbstractLeaseSource implements ThreadLockView {
  private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(DefaultDistributedLock.class);
  private final Primitive primitive;

  DefaultDistributedLock(DefaultLockClient client, LockOps ops, Primitive primitive, String name,
      LockOptions options) {
    super(client, ops, name, options);
    this.primitive = primitive;
  }

  Primitive primitive() {
    return primitive;
  }

  @Override
  String kindName() {
    return primitive.name().toLowerCase(java.util.Locale.ROOT);
  }

  @Override
  void beforeAcquire() {
    if (primitive == Primitive.WRITE && client.threadLease(Primitive.READ, name) != null) {
      throw new IllegalStateException("thread " + Thread.currentThread().getName() + " holds the read lock '"
          + name + "' and asked for its write lock: upgrading a read lock is not supported (it would wait "
          + "for itself); unlock the read lock first");
    }
  }

  @Override
  public Optional<LockInfo> inspect() {
    client.ensureOpen();
    return Futures.join(ops.inspect(name));
  }

  @Override
  public boolean forceUnlock() {
    client.ensureOpen();
    return client.forceUnlock(ops, name);
  }

  // ---------------------------------------------------------------- Lock view

  @Override
  public void unlock() {
    DefaultLease lease = client.threadLease(primitive, name);
    if (lease == null) {
      throw new IllegalMonitorStateException(
          "lock '" + name + "' is not held by thread " + Thread.currentThread().getName());
    }
    client.unlockOne(lease);
  }

  @Override
  public boolean isHeldByCurrentThread() {
    DefaultLease lease = client.threadLease(primitive, name);
    return lease != null && !lease.state().isFinal();
  }

  @Override
  public int getHoldCount() {
    DefaultLease lease = client.threadLease(primitive, name);
    return lease == null ? 0 : lease.holdCount();
  }

  @Override
  public Optional<Lease> currentThreadLease() {
    return Optional.ofNullable(client.threadLease(primitive, name));
  }

  @Override
  public String toString() {
    return "DistributedLock[" + primitive + " " + name + ", " + options + "]";
  }

  // ---------------------------------------------------------------- run under the lock

  @Override
  public <E extends Exception> void runLocked(Duration wait, LockedRunnable<E> task) throws E {
    Objects.requireNonNull(task, "task");
    callLocked(wait, () -> {
      task.run();
      return null;
    });
  }

  /** Through the Lock view, so that the calling thread holds the lock, re-entrantly; see the interface. */
  @Override
  public <T, E extends Exception> T callLocked(Duration wait, LockedCallable<T, E> task) throws E {
    Objects.requireNonNull(task, "task");
    long nanos = waitNanos(wait);
    boolean locked;
    try {
      if (Thread.interrupted()) {
        throw new InterruptedException();
      }
      locked = lockForThread(nanos, true);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AcquireInterruptedException(name, e);
    }
    if (!locked) {
      throw timeout(wait, (AcquireReply) null);
    }
    try {
      return task.call();
    } finally {
      unlockAfterTask();
    }
  }

  /** The task is over: a failed unlock must not turn its outcome into an exception (see Lease#close). */
  private void unlockAfterTask() {
    try {
      unlock();
    } catch (LockException e) {
      log.warn("lock '{}': unlock after the task failed: {}; the lock expires on the server within its lease "
          + "of {}", name, e.getMessage(), options.leaseTime());
    }
  }

  @Override
  AcquireTimeoutException timeout(Duration wait, AcquireReply lastReply) {
    switch (primitive) {
      case FAIR:
        return new AcquireTimeoutException(name, LockKind.FAIR, wait, "fair lock '" + name
            + "' was not acquired within " + wait + ": it was held, or earlier arrivals were ahead in its queue");
      case READ:
        return new AcquireTimeoutException(name, LockKind.READ_WRITE, wait, "read lock of read-write lock '"
            + name + "' was not acquired within " + wait + ": a writer held it or was ahead in line");
      case WRITE:
        return new AcquireTimeoutException(name, LockKind.READ_WRITE, wait, "write lock of read-write lock '"
            + name + "' was not acquired within " + wait + ": readers or another writer held it");
      default:
        return new AcquireTimeoutException(name, LockKind.EXCLUSIVE, wait, "exclusive lock '" + name
            + "' was not acquired within " + wait + ": another owner held it");
    }
  }

  // ---------------------------------------------------------------- shared

  @Override
  public boolean lockForThread(long waitNanos, boolean interruptible) throws InterruptedException {
    DefaultLease held = client.threadLease(primitive, name);
    if (held != null) {
      client.reenter(held);
      return true;
    }
    DefaultLockClient.HoldKey key = new DefaultLockClient.HoldKey(primitive, name, Thread.currentThread());
    Throwable site = client.acquisitionSite(); // reported if the thread ends without unlocking
    DefaultLease writeHeld = primitive == Primitive.READ ? client.threadLease(Primitive.WRITE, name) : null;
    if (writeHeld != null) {
      // a read taken while this thread holds the write side is a downgrade: granted at once or not at all
      DefaultLease read = downgradeFrom(writeHeld, key);
      read.acquiredAt(site);
      client.registerThreadHold(read);
      return true;
    }
    Optional<DefaultLease> lease = await(start(waitNanos, key, null), interruptible);
    lease.ifPresent(l -> {
      l.acquiredAt(site);
      client.registerThreadHold(l);
    });
    return lease.isPresent();
  }

  /**
   * Takes this read side as the owner of {@code write}, a write lease of the same lock: the one path of
   * both downgrades ({@link DistributedReadWriteLock#downgrade} and a Lock-view {@code read.lock()}
   * under a write hold). The backend grants a read to the owner of the write hold at once; a refusal
   * means the write hold is gone, and so does a grant with another token (the hold had ended and
   * another writer came in between, so this is a fresh read, not a downgrade; it is given back). The
   * write lease is left as it is, except that it is marked LOST when the attempt shows it was lost.
   *
   * @param key the Lock view's thread hold for the read lease, or null for the lease view
   * @return the read lease, with the write lease's fencing token
   * @throws LeaseLostException if the write lease is no longer held; nothing is then held
   * @throws io.locksmith.BackendUnavailableException if the backend cannot be reached
   */
  DefaultLease downgradeFrom(DefaultLease write, DefaultLockClient.HoldKey key) {
    if (write.state().isFinal()) {
      throw new LeaseLostException(name, "the write lease is " + write.state() + "; nothing to downgrade");
    }
    Optional<DefaultLease> read;
    try {
      read = await(start(0, key, write.owner()), false);
    } catch (InterruptedException impossible) {
      throw new AssertionError(impossible);
    }
    if (read.isEmpty()) {
      write.markLost("a downgrade found the write lock no longer held by this owner");
      throw new LeaseLostException(name, "the write lease was lost before it could be downgraded");
    }
    if (read.get().fencingToken() != write.fencingToken()) {
      // what this writer wrote may already be overwritten by the writer that came in between
      client.giveBack(read.get());
      write.markLost("a downgrade found another write grant since this one");
      throw new LeaseLostException(name, "the write lease was lost before it could be downgraded");
    }
    return read.get();
  }
}
