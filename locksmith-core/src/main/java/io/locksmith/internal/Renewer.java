package io.locksmith.internal;

import io.locksmith.BackendUnavailableException;
import io.locksmith.spi.LockOps;
import io.locksmith.spi.RenewRequest;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
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
  private final ReentrantReadWriteLock dispatch = new ReentrantReadWriteLock();

  Renewer(DefaultLockClient client) {
    this.client = client;
  }

  /** @return the gate a release passes while it marks its lease as releasing */
  Lock releaseGate() {
    return dispatch.readLock();
  }

  /**
   * A watched lease's timer fired: renew it and every other lease that is nearly due, one backend call
   * per lock kind in the batch.
   */
  void renewDue(DefaultLease trigger) {
    Map<LockOps, List<DefaultLease>> batches = new LinkedHashMap<>();
    List<CompletionStage<List<Boolean>>> replies = new ArrayList<>();
    List<DefaultLease> orphans = new ArrayList<>(0);
    long sentAt;
    Lock write = dispatch.writeLock();
    write.lock();
    try {
      long now = System.nanoTime();
      if (orphaned(trigger, now, orphans)) {
        // not renewed: handed to the client below
      } else if (trigger.claimForRenewal(now)) {
        batches.computeIfAbsent(trigger.ops, o -> new ArrayList<>()).add(trigger);
      }
      // the client's live leases, not a set of watched ones of its own: one set fewer to add every lease
      // to and remove it from, on the path every acquire and release takes; a tick pays for the fixed ones
      for (DefaultLease lease : client.liveLeases()) {
        if (lease != trigger && lease.watched() && !orphaned(lease, now, orphans) && lease.claimForRenewal(now)) {
          batches.computeIfAbsent(lease.ops, o -> new ArrayList<>()).add(lease);
        }
      }
      if (batches.isEmpty()) {
        return;
      }
      sentAt = client.ticker().nanoTime();
      for (Map.Entry<LockOps, List<DefaultLease>> batch : batches.entrySet()) {
        List<RenewRequest> requests = new ArrayList<>();
        for (DefaultLease lease : batch.getValue()) {
          requests.add(new RenewRequest(lease.lockName(), lease.owner(),
              lease.lockOptions().leaseTime().toMillis()));
        }
        CompletionStage<List<Boolean>> reply;
        try {
          reply = batch.getKey().renew(requests);
        } catch (RuntimeException e) {
          reply = CompletableFuture.failedFuture(e);
        }
        replies.add(reply);
      }
    } finally {
      write.unlock();
      // outside the dispatch lock: releasing passes the release gate
      for (DefaultLease orphan : orphans) {
        client.holderThreadEnded(orphan);
      }
    }
    long sent = sentAt;
    int i = 0;
    for (List<DefaultLease> batch : batches.values()) {
      replies.get(i++).whenComplete((owned, failure) -> onReplies(batch, sent, owned, failure));
    }
  }

  /**
   * Verifies {@code leases} now, due or not, in one round (one backend call per lock kind): the
   * connection came back, so any of them may be gone (a server that restarted empty, a failover to a
   * replica that missed it), and waiting for each lease's next renewal would leave it {@code HELD} or
   * {@code UNCERTAIN} for up to a third of its lease. Watched leases are renewed; fixed leases are
   * confirmed without being extended ({@link DefaultLease#claimForVerification}). A lease whose renewal
   * is already in flight is verified again once that renewal's reply is in: the renewal may have been
   * answered from before the event (a Redlock node that restarted empty answered it before it went), and
   * if its answer is inconclusive the lease would otherwise wait for its next retry.
   *
   * @param leases the leases to verify; final or releasing ones are skipped
   * @return how many leases were sent for verification
   */
  int verifyNow(Iterable<DefaultLease> leases) {
    Map<LockOps, List<DefaultLease>> batches = new LinkedHashMap<>();
    Map<LockOps, List<RenewRequest>> requests = new LinkedHashMap<>();
    List<CompletionStage<List<Boolean>>> replies = new ArrayList<>();
    int sentCount = 0;
    long sentAt;
    Lock write = dispatch.writeLock();
    write.lock();
    try {
      for (DefaultLease lease : leases) {
        long millis = lease.claimForVerification();
        if (millis < 0) {
          continue;
        }
        batches.computeIfAbsent(lease.ops, o -> new ArrayList<>()).add(lease);
        requests.computeIfAbsent(lease.ops, o -> new ArrayList<>())
            .add(new RenewRequest(lease.lockName(), lease.owner(), millis));
        sentCount++;
      }
      if (batches.isEmpty()) {
        return 0;
      }
      sentAt = client.ticker().nanoTime();
      for (Map.Entry<LockOps, List<RenewRequest>> batch : requests.entrySet()) {
        CompletionStage<List<Boolean>> reply;
        try {
          reply = batch.getKey().renew(batch.getValue());
        } catch (RuntimeException e) {
          reply = CompletableFuture.failedFuture(e);
        }
        replies.add(reply);
      }
    } finally {
      write.unlock();
    }
    long sent = sentAt;
    int i = 0;
    for (List<DefaultLease> batch : batches.values()) {
      replies.get(i++).whenComplete((owned, failure) -> onReplies(batch, sent, owned, failure));
    }
    return sentCount;
  }

  /**
   * A Lock-view hold due for renewal whose thread has ended is not renewed: nobody can unlock it, so
   * renewing would keep the lock for the life of the client. Checked only for leases that are due, so a
   * tick costs one {@link Thread#isAlive()} per lease it would renew.
   */
  private static boolean orphaned(DefaultLease lease, long now, List<DefaultLease> orphans) {
    if (lease.holdKey != null && lease.dueForRenewal(now) && lease.orphaned()) {
      orphans.add(lease);
      return true;
    }
    return false;
  }

  private void onReplies(List<DefaultLease> batch, long sentAt, List<Boolean> owned, Throwable failure) {
    Throwable cause = failure == null ? null : Futures.unwrap(failure);
    List<DefaultLease> nowUncertain = new ArrayList<>(0);
    Throwable firstUnknown = null;
    for (int i = 0; i < batch.size(); i++) {
      Boolean answer = cause == null ? owned.get(i) : null;
      Throwable unknown = cause != null ? cause : answer == null
          ? new BackendUnavailableException("the backend could not tell whether the lease is still held")
          : null;
      if (batch.get(i).onRenewalReply(sentAt, Boolean.TRUE.equals(answer), unknown)) {
        nowUncertain.add(batch.get(i));
        firstUnknown = firstUnknown == null ? unknown : firstUnknown;
      }
    }
    if (!nowUncertain.isEmpty()) {
      client.signals().reportUncertain(nowUncertain, "renewal failed: " + firstUnknown.getMessage());
    }
    List<DefaultLease> again = new ArrayList<>(0);
    for (DefaultLease lease : batch) {
      if (lease.takeVerifyAgain()) {
        again.add(lease);
      }
    }
    if (!again.isEmpty()) {
      client.runOnTimer(() -> verifyNow(again));
    }
  }
}
