package io.locksmith.internal;

import io.locksmith.DistributedLock;
import io.locksmith.Lease;
import io.locksmith.LockInfo;
import io.locksmith.LockOptions;
import io.locksmith.spi.LockOps;
import io.locksmith.spi.Primitive;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Both views of one named lock of one primitive (exclusive, fair, or a side of a read-write lock).
 */
final class DefaultDistributedLock extends AbstractLeaseSource implements DistributedLock {
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

  // ---------------------------------------------------------------- shared

  private boolean lockForThread(long waitNanos, boolean interruptible) throws InterruptedException {
    DefaultLease held = client.threadLease(primitive, name);
    if (held != null) {
      client.reenter(held);
      return true;
    }
    DefaultLockClient.HoldKey key = new DefaultLockClient.HoldKey(primitive, name, Thread.currentThread());
    // a read taken while this thread holds the write side is a downgrade: same owner, granted at once
    DefaultLease writeHeld = primitive == Primitive.READ ? client.threadLease(Primitive.WRITE, name) : null;
    String owner = writeHeld != null && !writeHeld.state().isFinal() ? writeHeld.owner() : null;
    Optional<DefaultLease> lease = await(start(waitNanos, key, owner), interruptible);
    lease.ifPresent(client::registerThreadHold);
    return lease.isPresent();
  }
}
