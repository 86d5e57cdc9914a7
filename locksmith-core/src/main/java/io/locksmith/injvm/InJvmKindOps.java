package io.locksmith.injvm;

import io.locksmith.LockInfo;
import io.locksmith.SemaphoreInfo;
import io.locksmith.SemaphoreState;
import io.locksmith.spi.AcquireMode;
import io.locksmith.spi.AcquireReply;
import io.locksmith.spi.HoldKind;
import io.locksmith.spi.RenewRequest;
import io.locksmith.spi.SemaphoreOps;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * One client's operations on one side of a fair lock, read-write lock or semaphore of an
 * {@link InJvmLockServer}. Operations complete before they return; the semaphore-only ones are refused
 * on the other sides.
 */
final class InJvmKindOps implements SemaphoreOps {
  private final InJvmBackend backend;
  private final InJvmKindTable table;
  private final InJvmKindTable.Side side;
  private final int declaredPermits;

  InJvmKindOps(InJvmBackend backend, InJvmKindTable.Side side, int declaredPermits) {
    this.backend = backend;
    this.table = backend.server().kinds;
    this.side = side;
    this.declaredPermits = declaredPermits;
  }

  private <T> CompletionStage<T> done(T value) {
    return CompletableFuture.completedFuture(value);
  }

  @Override
  public CompletionStage<AcquireReply> acquire(String name, String owner, long leaseMillis, AcquireMode mode,
      String waiterId) {
    CompletionStage<AcquireReply> down = backend.outage("acquire " + side + " '" + name + "'");
    if (down != null) {
      return down;
    }
    List<InJvmLockServer.Wake> wakes = new ArrayList<>(1);
    AcquireReply reply;
    synchronized (table) { // the table's own lock: the counts are those right after this attempt
      reply = table.acquire(side, backend.key(name), owner, leaseMillis, mode, waiterId,
          backend.context().wakeups(), declaredPermits, wakes);
      if (side == InJvmKindTable.Side.PERMIT && !reply.lost()) {
        SemaphoreInfo counts = table.describe(backend.key(name), name, declaredPermits);
        reply = reply.withPermits(counts.permits(), counts.taken());
      }
    }
    backend.deliver(wakes);
    return done(reply);
  }

  @Override
  public CompletionStage<Integer> release(String name, String owner, boolean all) {
    CompletionStage<Integer> down = backend.outage("release " + side + " '" + name + "'");
    if (down != null) {
      return down;
    }
    List<InJvmLockServer.Wake> wakes = new ArrayList<>(1);
    int left = table.release(side, backend.key(name), owner, all, wakes);
    backend.deliver(wakes);
    return done(left);
  }

  @Override
  public CompletionStage<List<Boolean>> renew(List<RenewRequest> requests) {
    CompletionStage<List<Boolean>> down = backend.outage("renew leases");
    if (down != null) {
      return down;
    }
    List<String> keys = new ArrayList<>(requests.size());
    for (RenewRequest r : requests) {
      keys.add(backend.key(r.name()));
    }
    return done(table.renew(side, requests, keys));
  }

  @Override
  public void cancelWait(String name, String waiterId) {
    List<InJvmLockServer.Wake> wakes = new ArrayList<>(1);
    table.cancelWait(side, backend.key(name), waiterId, wakes);
    backend.deliver(wakes);
  }

  @Override
  public void passWakeup(String name, String goneWaiterId) {
    List<InJvmLockServer.Wake> wakes = new ArrayList<>(1);
    table.passWakeup(side, backend.key(name), goneWaiterId, wakes);
    backend.deliver(wakes);
  }

  @Override
  public CompletionStage<Optional<LockInfo>> inspect(String name) {
    CompletionStage<Optional<LockInfo>> down = backend.outage("inspect " + side + " '" + name + "'");
    return down != null ? down : done(table.inspect(side, backend.key(name), name));
  }

  @Override
  public CompletionStage<Boolean> forceUnlock(String name) {
    CompletionStage<Boolean> down = backend.outage("force-unlock " + side + " '" + name + "'");
    if (down != null) {
      return down;
    }
    List<InJvmLockServer.Wake> wakes = new ArrayList<>(1);
    List<String> evicted = new ArrayList<>(1);
    boolean deleted = table.forceUnlock(side, backend.key(name), wakes, evicted);
    backend.server().noticeEvicted(holdKind(), name, evicted);
    backend.deliver(wakes);
    return done(deleted);
  }

  private HoldKind holdKind() {
    switch (side) {
      case FAIR:
        return HoldKind.FAIR;
      case READ:
        return HoldKind.READ;
      case WRITE:
        return HoldKind.WRITE;
      default:
        return HoldKind.PERMIT;
    }
  }

  @Override
  public CompletionStage<SemaphoreInfo> describe(String name) {
    CompletionStage<SemaphoreInfo> down = backend.outage("describe semaphore '" + name + "'");
    return down != null ? down : done(table.describe(backend.key(name), name, declaredPermits));
  }

  @Override
  public CompletionStage<SemaphoreState> state(String name) {
    CompletionStage<SemaphoreState> down = backend.outage("inspect semaphore '" + name + "'");
    return down != null ? down : done(table.state(backend.key(name), name));
  }

  @Override
  public CompletionStage<Void> setPermits(String name, int permits) {
    CompletionStage<Void> down = backend.outage("set the permits of '" + name + "'");
    if (down != null) {
      return down;
    }
    List<InJvmLockServer.Wake> wakes = new ArrayList<>();
    table.setPermits(backend.key(name), permits, wakes);
    backend.deliver(wakes);
    return done(null);
  }
}
