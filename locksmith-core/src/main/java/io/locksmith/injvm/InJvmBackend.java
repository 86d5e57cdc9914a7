package io.locksmith.injvm;

import io.locksmith.BackendUnavailableException;
import io.locksmith.Capabilities;
import io.locksmith.FencingGuarantee;
import io.locksmith.LockInfo;
import io.locksmith.LockKind;
import io.locksmith.spi.AcquireMode;
import io.locksmith.spi.AcquireReply;
import io.locksmith.spi.BackendContext;
import io.locksmith.spi.HoldKind;
import io.locksmith.spi.LockBackend;
import io.locksmith.spi.LockOps;
import io.locksmith.spi.Primitive;
import io.locksmith.spi.SemaphoreOps;
import io.locksmith.spi.RenewRequest;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** One client's view of an {@link InJvmLockServer}. Operations complete before they return. */
final class InJvmBackend implements LockBackend {
  private static final Capabilities CAPABILITIES =
      new Capabilities("in-jvm", EnumSet.allOf(LockKind.class), FencingGuarantee.STRICT, true);

  private final InJvmLockServer server;
  private volatile BackendContext context;

  InJvmBackend(InJvmLockServer server) {
    this.server = server;
  }

  @Override
  public void open(BackendContext context) {
    this.context = context;
    server.connect(context.clientId(), context.events());
  }

  @Override
  public Capabilities capabilities() {
    return CAPABILITIES;
  }

  @Override
  public LockOps ops(Primitive primitive) {
    switch (primitive) {
      case EXCLUSIVE:
        return this;
      case FAIR:
        return new InJvmKindOps(this, InJvmKindTable.Side.FAIR, 0);
      case READ:
        return new InJvmKindOps(this, InJvmKindTable.Side.READ, 0);
      case WRITE:
        return new InJvmKindOps(this, InJvmKindTable.Side.WRITE, 0);
      default:
        throw new AssertionError(primitive);
    }
  }

  @Override
  public SemaphoreOps semaphoreOps(int declaredPermits) {
    return new InJvmKindOps(this, InJvmKindTable.Side.PERMIT, declaredPermits);
  }

  InJvmLockServer server() {
    return server;
  }

  BackendContext context() {
    return context;
  }

  /** Namespace and name, separated by a character names cannot contain. */
  String key(String name) {
    return context.namespace() + '\u0000' + name;
  }

  /** @return a failed stage while the server is unreachable, else null */
  <T> CompletionStage<T> outage(String what) {
    if (server.reachable()) {
      return null;
    }
    return CompletableFuture.failedFuture(
        new BackendUnavailableException("in-JVM lock server is unreachable (simulated): could not " + what,
            // the transport's own failure underneath, as on a real backend
            new java.net.ConnectException("in-JVM lock server is unreachable (simulated)")));
  }

  /** Delivers wake-ups outside the server's monitor; one whose waiter is gone goes to the next waiter. */
  void deliver(List<InJvmLockServer.Wake> wakes) {
    ArrayDeque<InJvmLockServer.Wake> pending = new ArrayDeque<>(wakes);
    while (!pending.isEmpty()) {
      InJvmLockServer.Wake wake = pending.poll();
      if (!wake.deliver()) {
        List<InJvmLockServer.Wake> next = new ArrayList<>(1);
        wake.source().passWakeup(wake.key(), wake.waiterId(), next);
        pending.addAll(next);
      }
    }
  }

  @Override
  public CompletionStage<AcquireReply> acquire(String name, String owner, long leaseMillis,
      AcquireMode mode, String waiterId) {
    CompletionStage<AcquireReply> down = outage("acquire lock '" + name + "'");
    if (down != null) {
      return down;
    }
    return CompletableFuture.completedFuture(
        server.acquire(key(name), owner, leaseMillis, mode, waiterId, context.wakeups()));
  }

  @Override
  public CompletionStage<Integer> release(String name, String owner, boolean all) {
    CompletionStage<Integer> down = outage("release lock '" + name + "'");
    if (down != null) {
      return down;
    }
    List<InJvmLockServer.Wake> wakes = new ArrayList<>(1);
    int left = server.release(key(name), owner, all, wakes);
    deliver(wakes);
    return CompletableFuture.completedFuture(left);
  }

  @Override
  public CompletionStage<List<Boolean>> renew(List<RenewRequest> requests) {
    CompletionStage<List<Boolean>> down = outage("renew leases");
    if (down != null) {
      return down;
    }
    List<String> keys = new ArrayList<>();
    List<String> owners = new ArrayList<>();
    List<Long> leases = new ArrayList<>();
    for (RenewRequest r : requests) {
      keys.add(key(r.name()));
      owners.add(r.owner());
      leases.add(r.leaseMillis());
    }
    return CompletableFuture.completedFuture(server.renew(keys, owners, leases));
  }

  @Override
  public void cancelWait(String name, String waiterId) {
    server.cancelWait(key(name), waiterId);
  }

  @Override
  public void passWakeup(String name, String goneWaiterId) { // a woken waiter left the queue already
    List<InJvmLockServer.Wake> wakes = new ArrayList<>(1);
    server.passWakeup(key(name), wakes);
    deliver(wakes);
  }

  @Override
  public CompletionStage<Optional<LockInfo>> inspect(String name) {
    CompletionStage<Optional<LockInfo>> down = outage("inspect lock '" + name + "'");
    if (down != null) {
      return down;
    }
    return CompletableFuture.completedFuture(server.inspect(key(name), name));
  }

  @Override
  public CompletionStage<Boolean> forceUnlock(String name) {
    CompletionStage<Boolean> down = outage("force-unlock '" + name + "'");
    if (down != null) {
      return down;
    }
    List<InJvmLockServer.Wake> wakes = new ArrayList<>(1);
    List<String> evicted = new ArrayList<>(1);
    boolean deleted = server.forceUnlock(key(name), wakes, evicted);
    server.noticeEvicted(HoldKind.EXCLUSIVE, name, evicted);
    deliver(wakes);
    return CompletableFuture.completedFuture(deleted);
  }

  @Override
  public void close() {
    BackendContext c = context;
    if (c != null) {
      server.disconnect(c.clientId(), c.events());
      server.dropWaiters(c.wakeups());
      server.kinds.dropWaiters(c.wakeups());
    }
  }
}
