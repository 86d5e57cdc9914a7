package io.locksmith.internal;

import io.locksmith.DistributedSemaphore;
import io.locksmith.LockOptions;
import io.locksmith.SemaphoreInfo;
import io.locksmith.spi.SemaphoreOps;

/** A named semaphore: the shared lease view, one permit per lease; see {@link DistributedSemaphore}. */
final class DefaultSemaphore extends AbstractLeaseSource implements DistributedSemaphore {
  private final SemaphoreOps semaphore;
  private final int declaredPermits;

  DefaultSemaphore(DefaultLockClient client, SemaphoreOps ops, String name, int declaredPermits,
      LockOptions options) {
    super(client, ops, name, options);
    this.semaphore = ops;
    this.declaredPermits = declaredPermits;
  }

  @Override
  public int declaredPermits() {
    return declaredPermits;
  }

  @Override
  public SemaphoreInfo describe() {
    client.ensureOpen();
    return Futures.join(semaphore.describe(name));
  }

  @Override
  public void setPermits(int permits) {
    if (permits < 1) {
      throw new IllegalArgumentException("a semaphore needs at least 1 permit, was " + permits);
    }
    client.ensureOpen();
    Futures.join(semaphore.setPermits(name, permits));
  }

  @Override
  public boolean forceUnlock() {
    client.ensureOpen();
    return client.forceUnlock(ops, name);
  }

  @Override
  public String toString() {
    return "DistributedSemaphore[" + name + ", declared " + declaredPermits + " permits, " + options + "]";
  }
}
