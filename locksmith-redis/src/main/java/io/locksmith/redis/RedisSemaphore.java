package io.locksmith.redis;

import io.lettuce.core.ScriptOutputType;
import io.locksmith.LockInfo;
import io.locksmith.PermitHolder;
import io.locksmith.SemaphoreInfo;
import io.locksmith.SemaphoreState;
import io.locksmith.spi.AcquireMode;
import io.locksmith.spi.AcquireReply;
import io.locksmith.spi.RenewRequest;
import io.locksmith.spi.SemaphoreOps;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The semaphore on one Redis node (see docs/semaphore.md). Per name, with one hash tag:
 *
 * <ul>
 *   <li>{@code <ns>:sem:{<name>}}: the permit count in force, a string without TTL (configuration);
 *   <li>{@code …:holders}: zset owner → lease expiry in server ms, one member per permit;
 *   <li>{@code …:tokens}: hash owner → fencing token; it and the holders zset expire with the last permit;
 *   <li>{@code …:waiters}: zset waiter id → deadline in server ms, as for the exclusive lock;
 *   <li>{@code …:fence}: the last token minted, kept for the fence retention after the last grant.
 * </ul>
 *
 * <p>Every operation is one script; expired permits are dropped lazily by whichever script runs next,
 * and every count considers unexpired members only. Thread-safe; shares the backend's connections.
 */
final class RedisSemaphore implements SemaphoreOps {
  /** Wake-up message tag of semaphore waiters (see {@link RedisBackend#onWakeMessage}). */
  static final char TAG = 's';
  private static final Logger log = LoggerFactory.getLogger(RedisSemaphore.class);

  private final RedisBackend backend;
  private final int declaredPermits;
  private final long waiterRecheckMillis;
  private final long fenceRetentionMillis;

  RedisSemaphore(RedisBackend backend, int declaredPermits, long waiterRecheckMillis,
      long fenceRetentionMillis) {
    this.backend = backend;
    this.declaredPermits = declaredPermits;
    this.waiterRecheckMillis = waiterRecheckMillis;
    this.fenceRetentionMillis = fenceRetentionMillis;
  }

  /** KEYS of the writing scripts: permit count, holders, tokens, waiters. */
  private String[] keys(String name) {
    String sem = backend.keys().semaphore(name);
    return new String[] {sem, RedisKeys.semaphoreHolders(sem), RedisKeys.semaphoreTokens(sem),
        RedisKeys.waiters(sem)};
  }

  private static String wakeTag(String name) {
    return TAG + name;
  }

  @Override
  public CompletionStage<AcquireReply> acquire(String name, String owner, long leaseMillis,
      AcquireMode mode, String waiterId) {
    String sem = backend.keys().semaphore(name);
    return backend.runAcquire(this, RedisScript.SEM_ACQUIRE, new RedisBackend.AcquireCall(
        "acquire a permit of semaphore '" + name + "'",
        new String[] {sem, RedisKeys.semaphoreHolders(sem), RedisKeys.semaphoreTokens(sem),
            RedisKeys.waiters(sem), RedisKeys.fence(sem)},
        new String[] {owner, Long.toString(leaseMillis), mode == AcquireMode.REENTER ? "r" : "n",
            waiterId == null ? "" : waiterId, Long.toString(waiterRecheckMillis),
            Long.toString(fenceRetentionMillis), Integer.toString(declaredPermits)}),
        name, owner, mode, waiterId, RedisSemaphore::toAcquireReply);
  }

  /** The acquire script's reply, with the counts in force that grants and refusals carry. */
  static AcquireReply toAcquireReply(List<Object> r) {
    AcquireReply reply = RedisBackend.toAcquireReply(r);
    if (r.size() >= 4) { // {1, token, 1, permits, taken} or {0, retry, permits, taken}
      int permits = ((Long) r.get(r.size() - 2)).intValue();
      int taken = ((Long) r.get(r.size() - 1)).intValue();
      reply = reply.withPermits(permits, taken);
    }
    return reply;
  }

  /** Returns the owner's permit; {@code all} makes no difference, a permit has one hold. */
  @Override
  public CompletionStage<Integer> release(String name, String owner, boolean all) {
    CompletionStage<Long> reply = backend.run(RedisScript.SEM_RELEASE, ScriptOutputType.INTEGER,
        "release a permit of semaphore '" + name + "'", keys(name), owner, backend.channelPrefix(),
        wakeTag(name));
    return reply.thenApply(Long::intValue);
  }

  @Override
  public CompletionStage<List<Boolean>> renew(List<RenewRequest> requests) {
    return backend.renewInBatches(RedisScript.SEM_RENEW, "permit(s)", requests, r -> {
      String sem = backend.keys().semaphore(r.name());
      return new String[] {RedisKeys.semaphoreHolders(sem), RedisKeys.semaphoreTokens(sem)};
    });
  }

  @Override
  public void cancelWait(String name, String waiterId) {
    backend.forgetWaiter(waiterId);
    try {
      backend.commands("remove a semaphore waiter")
          .zrem(RedisKeys.waiters(backend.keys().semaphore(name)), waiterId);
    } catch (RuntimeException e) {
      log.debug("could not remove waiter {} of semaphore '{}': {}", waiterId, name, e.toString());
    }
  }

  @Override
  public void passWakeup(String name, String goneWaiterId) { // a woken waiter left the waiters set
    backend.run(RedisScript.SEM_PASS_WAKEUP, ScriptOutputType.INTEGER,
        "pass a wake-up for semaphore '" + name + "'", keys(name), backend.channelPrefix(), wakeTag(name))
        .whenComplete((v, f) -> {
          if (f != null) {
            log.debug("could not pass a wake-up for semaphore '{}': {}", name, f.toString());
          }
        });
  }

  /**
   * The holder whose permit runs out last, with hold count 1; {@link LockInfo#waiters()} counts live
   * waiters.
   */
  @Override
  public CompletionStage<Optional<LockInfo>> inspect(String name) {
    String sem = backend.keys().semaphore(name);
    CompletionStage<List<Object>> reply = backend.run(RedisScript.SEM_INSPECT, ScriptOutputType.MULTI,
        "inspect semaphore '" + name + "'",
        new String[] {RedisKeys.semaphoreHolders(sem), RedisKeys.semaphoreTokens(sem), RedisKeys.waiters(sem)});
    return reply.thenApply(r -> r.isEmpty() ? Optional.empty() : Optional.of(new LockInfo(name,
        (String) r.get(0), 1, Long.parseLong((String) r.get(1)),
        Duration.ofMillis(Math.max(0, (Long) r.get(2))), ((Long) r.get(4)).intValue())));
  }

  /** Drops every permit (the stored count stays) and wakes one waiter per permit now free. */
  @Override
  public CompletionStage<Boolean> forceUnlock(String name) {
    CompletionStage<Long> reply = backend.run(RedisScript.SEM_FORCE_UNLOCK, ScriptOutputType.INTEGER,
        "force-unlock semaphore '" + name + "'", keys(name), backend.channelPrefix(), wakeTag(name));
    return reply.thenApply(n -> n > 0);
  }

  @Override
  public CompletionStage<SemaphoreInfo> describe(String name) {
    String sem = backend.keys().semaphore(name);
    CompletionStage<List<Object>> reply = backend.run(RedisScript.SEM_DESCRIBE, ScriptOutputType.MULTI,
        "describe semaphore '" + name + "'",
        new String[] {sem, RedisKeys.semaphoreHolders(sem), RedisKeys.waiters(sem)},
        Integer.toString(declaredPermits));
    return reply.thenApply(r -> new SemaphoreInfo(name, ((Long) r.get(0)).intValue(),
        ((Long) r.get(1)).intValue(), ((Long) r.get(2)).intValue()));
  }

  /** One read-only script: the stored count (0 = none), the waiters, and every unexpired permit. */
  @Override
  public CompletionStage<SemaphoreState> state(String name) {
    CompletionStage<List<Object>> reply = backend.run(RedisScript.SEM_STATE, ScriptOutputType.MULTI,
        "inspect semaphore '" + name + "'", keys(name));
    return reply.thenApply(r -> {
      int stored = ((Long) r.get(0)).intValue();
      List<PermitHolder> holders = new ArrayList<>((r.size() - 2) / 3);
      for (int i = 2; i + 2 < r.size(); i += 3) {
        holders.add(new PermitHolder((String) r.get(i), Long.parseLong((String) r.get(i + 1)),
            Duration.ofMillis(Math.max(0, (Long) r.get(i + 2)))));
      }
      return new SemaphoreState(name, stored > 0 ? OptionalInt.of(stored) : OptionalInt.empty(), holders,
          ((Long) r.get(1)).intValue());
    });
  }

  @Override
  public CompletionStage<Void> setPermits(String name, int permits) {
    if (permits < 1) {
      return CompletableFuture.failedFuture(
          new IllegalArgumentException("a semaphore needs at least 1 permit, was " + permits));
    }
    CompletionStage<Long> reply = backend.run(RedisScript.SEM_SET_PERMITS, ScriptOutputType.INTEGER,
        "set the permits of semaphore '" + name + "'", keys(name), Integer.toString(permits),
        backend.channelPrefix(), wakeTag(name));
    return reply.thenApply(before -> {
      if (before != permits) {
        log.info("semaphore '{}': permit count set to {} (was {})", name, permits,
            before == 0 ? "not stored" : before);
      }
      return null;
    });
  }

  @Override
  public String toString() {
    return "RedisSemaphore[declared " + declaredPermits + " permits, " + backend.description() + "]";
  }
}
