package io.locksmith.redis;

import io.lettuce.core.ScriptOutputType;
import io.locksmith.LockInfo;
import io.locksmith.spi.AcquireMode;
import io.locksmith.spi.AcquireReply;
import io.locksmith.spi.LockOps;
import io.locksmith.spi.RenewRequest;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The fair lock on one Redis node, over the connections of a {@link RedisBackend}: granted in order of
 * arrival at the server.
 *
 * <p>The lock itself is a hash ({@code o} owner, {@code c} holds, {@code t} token; TTL = lease; the exclusive
 * lock is a string key instead, see docs/redis.md),
 * under its own key prefix, so a fair lock and an exclusive lock of the same name are different locks.
 * Beside it, two sorted sets over the same waiter ids: {@code :queue} scored by the waiter's first
 * arrival (server µs) and {@code :places} scored by when its place expires (server ms). Every attempt of
 * a waiting acquisition refreshes its place; a waiter that dies or gives up silently stops refreshing
 * and its place expires after {@link #queueTimeout(Duration) the place timeout}, so it never blocks the
 * queue for longer. Every script drops expired places before it asks who is first.
 *
 * <p>A fresh grant needs the lock free and the caller first in the queue, or the queue empty: a
 * caller that does not wait ({@code waiterId == null}) never overtakes a queued waiter. A release wakes
 * the head only. The busy reply's retry hint is at most a third of the place timeout (so a live
 * waiter refreshes its place in time), and for a waiter behind others no later than the head's place
 * expires (so a dead head costs the next waiter at most the place timeout).
 *
 * <p>Thread-safe: every method sends one script and returns at once.
 */
final class RedisFairLock implements LockOps {
  /** Wake-up message tag of the fair lock's waiters; see {@link RedisBackend#onWakeMessage}. */
  static final char TAG = 'f';
  private static final Logger log = LoggerFactory.getLogger(RedisFairLock.class);

  private final RedisBackend backend;
  private final long waiterRecheckMillis;
  private final long fenceRetentionMillis;
  private volatile long queueTimeoutMillis = RedisLockClient.DEFAULT_FAIR_QUEUE_TIMEOUT.toMillis();

  RedisFairLock(RedisBackend backend, Duration waiterRecheck, Duration fenceRetention) {
    this.backend = backend;
    this.waiterRecheckMillis = waiterRecheck.toMillis();
    this.fenceRetentionMillis = fenceRetention.toMillis();
  }

  /** Sets how long a waiter's place outlives its last attempt; call before the backend is used. */
  void queueTimeout(Duration timeout) {
    this.queueTimeoutMillis = timeout.toMillis();
  }

  /** @return the lock hash and the keys beside it, in the order every fair script takes them */
  private String[] keys(String name, boolean withFence) {
    String lock = backend.keys().fairLock(name);
    return withFence
        ? new String[] {lock, RedisKeys.fairQueue(lock), RedisKeys.fairPlaces(lock), RedisKeys.fairFence(lock)}
        : new String[] {lock, RedisKeys.fairQueue(lock), RedisKeys.fairPlaces(lock)};
  }

  private String taggedName(String name) {
    return TAG + name;
  }

  @Override
  public CompletionStage<AcquireReply> acquire(String name, String owner, long leaseMillis,
      AcquireMode mode, String waiterId) {
    return backend.runAcquire(this, RedisScript.FAIR_ACQUIRE, new RedisBackend.AcquireCall(
        "acquire fair lock '" + name + "'", keys(name, true), new String[] {
            owner, Long.toString(leaseMillis), mode == AcquireMode.REENTER ? "r" : "n",
            waiterId == null ? "" : waiterId, Long.toString(waiterRecheckMillis),
            Long.toString(fenceRetentionMillis), Long.toString(queueTimeoutMillis)}),
        name, owner, mode, waiterId);
  }

  @Override
  public CompletionStage<Integer> release(String name, String owner, boolean all) {
    CompletionStage<Long> reply = backend.run(RedisScript.FAIR_RELEASE, ScriptOutputType.INTEGER,
        "release fair lock '" + name + "'", keys(name, false), owner, all ? "1" : "0",
        backend.channelPrefix(), taggedName(name));
    return reply.thenApply(Long::intValue);
  }

  /** {@code renew.lua} serves every lock kept as a hash with an owner field {@code o}, as this one is. */
  @Override
  public CompletionStage<List<Boolean>> renew(List<RenewRequest> requests) {
    return backend.renewInBatches(RedisScript.RENEW, "fair lease(s)", requests,
        r -> new String[] {backend.keys().fairLock(r.name())});
  }

  /**
   * Removes the waiter's place; if it was first in line and the lock is free, wakes the new head.
   * Best effort: a removal that does not arrive leaves a place that expires after the place timeout.
   */
  @Override
  public void cancelWait(String name, String waiterId) {
    backend.forgetWaiter(waiterId);
    backend.run(RedisScript.FAIR_CANCEL, ScriptOutputType.INTEGER, "remove waiter of fair lock '" + name + "'",
        keys(name, false), waiterId, backend.channelPrefix(), taggedName(name))
        .whenComplete((v, f) -> {
          if (f != null) {
            log.debug("could not remove waiter {} of fair lock '{}': {}", waiterId, name, f.toString());
          }
        });
  }

  /**
   * The woken head is gone: it leaves the queue like a waiter that gives up, which wakes the new head
   * if the lock is free. (Keeping the head queued until its grant is what makes the order fair; it is
   * also why a gone head must be removed here, or every wake-up would reach it again.)
   */
  @Override
  public void passWakeup(String name, String goneWaiterId) {
    cancelWait(name, goneWaiterId);
  }

  /** The holder; {@link LockInfo#waiters()} counts queued waiters whose place has not expired. */
  @Override
  public CompletionStage<Optional<LockInfo>> inspect(String name) {
    CompletionStage<List<Object>> reply = backend.run(RedisScript.FAIR_INSPECT, ScriptOutputType.MULTI,
        "inspect fair lock '" + name + "'", keys(name, false));
    return reply.thenApply(r -> r.isEmpty() ? Optional.empty() : Optional.of(new LockInfo(name,
        (String) r.get(0), Integer.parseInt((String) r.get(1)), Long.parseLong((String) r.get(2)),
        Duration.ofMillis(Math.max(0, (Long) r.get(3))), ((Long) r.get(4)).intValue())));
  }

  /** Deletes the lock whoever holds it and wakes the head of the queue; the queue stays. */
  @Override
  public CompletionStage<Boolean> forceUnlock(String name) {
    CompletionStage<Long> reply = backend.run(RedisScript.FAIR_FORCE_UNLOCK, ScriptOutputType.INTEGER,
        "force-unlock fair lock '" + name + "'", keys(name, false), backend.channelPrefix(),
        taggedName(name));
    return reply.thenApply(n -> n == 1L);
  }
}
