package io.locksmith.internal;

import io.locksmith.AcquireTimeoutException;
import io.locksmith.DistributedSemaphore;
import io.locksmith.LockKind;
import io.locksmith.LockOptions;
import io.locksmith.SemaphoreInfo;
import io.locksmith.spi.AcquireReply;
import io.locksmith.spi.SemaphoreOps;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A named semaphore: the shared lease view, one permit per lease; see {@link DistributedSemaphore}. */
final class DefaultSemaphore extends AbstractLeaseSource implements DistributedSemaphore {
  private static final Logger log = LoggerFactory.getLogger(DefaultSemaphore.class);
  private final SemaphoreOps semaphore;
  private final int declaredPermits;
  /** Whether this object has reported that its declared count is not the one in force. */
  private final AtomicBoolean mismatchReported = new AtomicBoolean();

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
    SemaphoreInfo info = Futures.join(semaphore.describe(name));
    checkCount(info.permits());
    return info;
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
  void observeReply(AcquireReply reply) {
    checkCount(reply.permitsInForce());
  }

  /**
   * The count stored with the semaphore is in force for every client, whatever this object declared
   * (see {@link DistributedSemaphore}). A caller who declared another count has a wrong idea of the
   * capacity and would otherwise only see waits it cannot explain, so say so, once per object.
   */
  private void checkCount(int inForce) {
    if (inForce > 0 && inForce != declaredPermits && mismatchReported.compareAndSet(false, true)) {
      log.warn("semaphore '{}' was declared with {} permits, but {} are in force: the count stored with the "
          + "semaphore (by the first client to use it, or by setPermits) applies to every client, and the "
          + "declared count only to a semaphore that has none stored. Use setPermits({}) to change it for "
          + "everyone, or declare {}", name, declaredPermits, inForce, declaredPermits, inForce);
    }
  }

  @Override
  AcquireTimeoutException timeout(Duration wait, AcquireReply lastReply) {
    StringBuilder m = new StringBuilder("semaphore '").append(name).append("': no permit was acquired within ")
        .append(wait);
    int inForce = lastReply == null ? -1 : lastReply.permitsInForce();
    int taken = lastReply == null ? -1 : lastReply.permitsTaken();
    if (inForce <= 0) {
      m.append(" (declared with ").append(declaredPermits).append(" permits; the backend did not report its count)");
    } else {
      m.append(": ").append(inForce).append(inForce == 1 ? " permit is" : " permits are").append(" in force");
      if (inForce != declaredPermits) {
        m.append(" (the count stored with the semaphore; this object declared ").append(declaredPermits)
            .append(", see setPermits)");
      }
      if (taken >= 0) {
        m.append(", ").append(taken).append(" taken at the last attempt");
      }
    }
    return new AcquireTimeoutException(name, LockKind.SEMAPHORE, wait, m.toString());
  }

  @Override
  public String toString() {
    return "DistributedSemaphore[" + name + ", declared " + declaredPermits + " permits, " + options + "]";
  }
}
