package io.locksmith.internal;

import io.locksmith.BackendUnavailableException;
import io.locksmith.spi.LockBackend;
import io.locksmith.spi.RenewRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The client's one renewal machine. When a watched lease's timer fires, every watched lease due within
 * the next ninth of its lease goes out in the same batch, so the backend sees one request per tick
 * rather than one per lease.
 *
 * <p>Renewal never outlives release: a batch is chosen and <em>dispatched</em> under the write side of
 * {@link #dispatch}, and a release marks its lease as releasing under the read side before it sends
 * anything. So a renewal is either sent before the release (and the server applies it first), or never.
 */
final class Renewer {
  private final DefaultLockClient client;
  private final LockBackend backend;
  private final Set<DefaultLease> watched = ConcurrentHashMap.newKeySet();
  private final ReentrantReadWriteLock dispatch = new ReentrantReadWriteLock();

  Renewer(DefaultLockClient client, LockBackend backend) {
    this.client = client;
    this.backend = backend;
  }

  void add(DefaultLease lease) {
    watched.add(lease);
  }

  void remove(DefaultLease lease) {
    watched.remove(lease);
  }

  /** @return the gate a release passes while it marks its lease as releasing */
  Lock releaseGate() {
    return dispatch.readLock();
  }

  /** A watched lease's timer fired: renew it and every other lease that is nearly due. */
  void renewDue(DefaultLease trigger) {
    List<DefaultLease> batch = new ArrayList<>();
    List<RenewRequest> requests = new ArrayList<>();
    CompletionStage<List<Boolean>> reply;
    long sentAt;
    Lock write = dispatch.writeLock();
    write.lock();
    try {
      long now = System.nanoTime();
      if (trigger.claimForRenewal(now)) {
        batch.add(trigger);
      }
      for (DefaultLease lease : watched) {
        if (lease != trigger && lease.claimForRenewal(now)) {
          batch.add(lease);
        }
      }
      if (batch.isEmpty()) {
        return;
      }
      for (DefaultLease lease : batch) {
        requests.add(new RenewRequest(lease.lockName(), lease.owner(),
            lease.lockOptions().leaseTime().toMillis()));
      }
      sentAt = client.ticker().nanoTime();
      try {
        reply = backend.renew(requests);
      } catch (RuntimeException e) {
        reply = CompletableFuture.failedFuture(e);
      }
    } finally {
      write.unlock();
    }
    long sent = sentAt;
    reply.whenComplete((owned, failure) -> {
      Throwable cause = failure == null ? null : Futures.unwrap(failure);
      for (int i = 0; i < batch.size(); i++) {
        Boolean answer = cause == null ? owned.get(i) : null;
        Throwable unknown = cause != null ? cause : answer == null
            ? new BackendUnavailableException("the backend could not tell whether the lease is still held")
            : null;
        batch.get(i).onRenewalReply(sent, Boolean.TRUE.equals(answer), unknown);
      }
    });
  }
}
