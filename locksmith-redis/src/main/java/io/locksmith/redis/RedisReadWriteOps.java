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
 * The Redis read-write lock: its two sides ({@link #read()}, {@link #write()}) over the connections of
 * one {@link RedisBackend}. Every operation is one script (rw-*.lua, each with rw-prelude.lua in front)
 * over the lock's nine keys, which share the lock's hash tag ({@link RedisKeys#readWrite(String)}), so
 * that each script touches one Cluster slot.
 *
 * <p>The writer is a hash ({@code holds.lua}), with the write lease as its TTL. Each reader has
 * its own lease: a sorted set maps reader owner → end of its lease in server milliseconds, and a hash
 * keeps each reader's hold count and token; a reader whose lease ended no longer counts (the next
 * script drops it), so a crashed reader blocks writers for its remaining lease at most. Waiting
 * writers and waiting readers are registered in two sorted sets. Admission is phase-fair: a waiting
 * reader holds a ticket, the write generation (a counter of write grants) whose end it waits for; once
 * that write phase is over it enters even while writers wait, and no writer is granted while such a
 * reader is registered, so the readers waiting when a writer's hold ends enter as one batch before the
 * next writer. A reader that arrives while writers wait (and none holds) queues behind the next one, so
 * writers do not starve either. See docs/read-write-lock.md.
 *
 * <p>Thread-safe: it holds no mutable state of its own.
 */
final class RedisReadWriteOps {
  private static final Logger log = LoggerFactory.getLogger(RedisReadWriteOps.class);
  /** Wake-up tag of a waiting reader; see {@link RedisBackend#onWakeMessage}. Matches rw-prelude.lua. */
  static final char READ_TAG = 'r';
  /** Wake-up tag of a waiting writer. Matches rw-prelude.lua. */
  static final char WRITE_TAG = 'w';
  /** Index of the readers zset and the reader holds hash in {@link RedisKeys#readWrite(String)}. */
  private static final int READERS = 1;
  private static final int READER_HOLDS = 2;
  /** Index of the writer hash. */
  private static final int WRITER = 0;

  private final RedisBackend backend;
  private final LockOps read = new Side(false);
  private final LockOps write = new Side(true);

  RedisReadWriteOps(RedisBackend backend) {
    this.backend = backend;
  }

  /** @return the shared side; one instance, so that the core batches its renewals together */
  LockOps read() {
    return read;
  }

  /** @return the exclusive side */
  LockOps write() {
    return write;
  }

  /** One side of every read-write lock of this backend. */
  private final class Side implements LockOps {
    private final boolean writer;
    private final String side;

    Side(boolean writer) {
      this.writer = writer;
      this.side = writer ? "w" : "r";
    }

    private String what(String action, String name) {
      return action + " " + (writer ? "write" : "read") + " lock '" + name + "'";
    }

    @Override
    public CompletionStage<AcquireReply> acquire(String name, String owner, long leaseMillis,
        AcquireMode mode, String waiterId) {
      String[] keys = backend.keys().readWrite(name);
      String modeArg = mode == AcquireMode.REENTER ? "r" : "n";
      String waiter = waiterId == null ? "" : waiterId;
      String recheck = Long.toString(backend.waiterRecheckMillis());
      // the first key (the writer hash) names the lock's slot for a replica acknowledgement
      return writer
          ? backend.runAcquire(this, RedisScript.RW_ACQUIRE_WRITE, new RedisBackend.AcquireCall(
              what("acquire", name), keys, new String[] {owner, Long.toString(leaseMillis), modeArg, waiter,
                  recheck, Long.toString(backend.fenceRetentionMillis()), backend.channelPrefix(), name}), name,
              owner, mode, waiterId)
          : backend.runAcquire(this, RedisScript.RW_ACQUIRE_READ, new RedisBackend.AcquireCall(
              what("acquire", name), keys, new String[] {owner, Long.toString(leaseMillis), modeArg, waiter,
                  recheck, backend.channelPrefix(), name}), name, owner, mode, waiterId);
    }

    @Override
    public CompletionStage<Integer> release(String name, String owner, boolean all) {
      CompletionStage<Long> reply = backend.run(writer ? RedisScript.RW_RELEASE_WRITE
              : RedisScript.RW_RELEASE_READ, ScriptOutputType.INTEGER, what("release", name),
          backend.keys().readWrite(name), owner, all ? "1" : "0", backend.channelPrefix(), name);
      return reply.thenApply(Long::intValue);
    }

    /**
     * One script call per Cluster slot and chunk (see {@link RedisBackend#renewInBatches}). The write
     * side's hash has the exclusive lock's layout, so it is renewed by the exclusive lock's script.
     */
    @Override
    public CompletionStage<List<Boolean>> renew(List<RenewRequest> requests) {
      return backend.renewInBatches(writer ? RedisScript.RENEW : RedisScript.RW_RENEW_READ, side + " lease(s)",
          requests, r -> {
            String[] k = backend.keys().readWrite(r.name());
            return writer ? new String[] {k[WRITER]} : new String[] {k[READERS], k[READER_HOLDS]};
          });
    }

    @Override
    public void cancelWait(String name, String waiterId) {
      backend.forgetWaiter(waiterId);
      backend.run(RedisScript.RW_CANCEL_WAIT, ScriptOutputType.INTEGER, what("stop waiting for", name),
          backend.keys().readWrite(name), waiterId, backend.channelPrefix(), name)
          .whenComplete((v, f) -> {
            if (f != null) {
              log.debug("could not remove waiter {} of '{}': {}", waiterId, name, f.toString());
            }
          });
    }

    @Override
    public void passWakeup(String name, String goneWaiterId) {
      backend.run(RedisScript.RW_PASS_WAKEUP, ScriptOutputType.INTEGER, what("pass a wake-up for", name),
          backend.keys().readWrite(name), side, backend.channelPrefix(), name, goneWaiterId)
          .whenComplete((v, f) -> {
            if (f != null) {
              log.debug("could not pass a wake-up for '{}': {}", name, f.toString());
            }
          });
    }

    @Override
    public CompletionStage<Optional<LockInfo>> inspect(String name) {
      CompletionStage<List<Object>> reply = backend.run(RedisScript.RW_INSPECT, ScriptOutputType.MULTI,
          what("inspect", name), backend.keys().readWrite(name), side);
      return reply.thenApply(r -> r.isEmpty() ? Optional.empty() : Optional.of(new LockInfo(name,
          (String) r.get(0), Integer.parseInt((String) r.get(1)), Long.parseLong((String) r.get(2)),
          Duration.ofMillis(Math.max(0, (Long) r.get(3))), ((Long) r.get(4)).intValue())));
    }

    @Override
    public CompletionStage<Boolean> forceUnlock(String name) {
      CompletionStage<Long> reply = backend.run(RedisScript.RW_FORCE_UNLOCK, ScriptOutputType.INTEGER,
          what("force-unlock", name), backend.keys().readWrite(name), side, backend.channelPrefix(), name);
      return reply.thenApply(n -> n == 1L);
    }

    @Override
    public String toString() {
      return "RedisReadWriteOps[" + (writer ? "write" : "read") + "]";
    }
  }
}
