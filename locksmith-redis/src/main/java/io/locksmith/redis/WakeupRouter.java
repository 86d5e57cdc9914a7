package io.locksmith.redis;

import io.locksmith.spi.AcquireReply;
import io.locksmith.spi.BackendContext;
import io.locksmith.spi.HoldKind;
import io.locksmith.spi.LockOps;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This client's side of its wake-up channel ({@code <prefix><clientId>}): the waiters it registered on the
 * server, and the routing of each message (a wake-up to its waiter, or passed on in its lock kind's queue
 * when that waiter is gone; an eviction notice to the holder's lease). Thread-safe: messages arrive on
 * Lettuce I/O threads while callers register and cancel waiters; the table is concurrent. Never throws
 * from a message: a malformed or foreign one is ignored.
 */
final class WakeupRouter {
  // the backend's logger: these lines were its own before the split, and operators filter by it
  private static final Logger log = LoggerFactory.getLogger(RedisBackend.class);

  private final RedisBackend backend;
  /**
   * Waiters this client registered on the server and has not seen granted or cancelled, waiter id to lock
   * name: after the pub/sub connection subscribes again (it had dropped, so messages may have been lost)
   * each of them re-checks once instead of waiting for its backstop.
   */
  private final Map<String, String> registeredWaiters = new ConcurrentHashMap<>();

  WakeupRouter(RedisBackend backend) {
    this.backend = backend;
  }

  /**
   * Remembers a waiter the server registered with a refusal (any lock kind), so that it re-checks when
   * the wake-up channel is subscribed again (see {@link #recheckAll}); forgets it once granted.
   */
  CompletionStage<AcquireReply> track(String name, String waiterId, CompletionStage<AcquireReply> reply) {
    if (waiterId == null) {
      return reply;
    }
    return reply.thenApply(r -> {
      if (r.granted()) {
        registeredWaiters.remove(waiterId);
      } else {
        registeredWaiters.put(waiterId, name);
      }
      return r;
    });
  }

  /** @return whether this client knows {@code waiterId} to be registered on the server */
  boolean isRegistered(String waiterId) {
    return registeredWaiters.containsKey(waiterId);
  }

  /** @return how many waiters of this client are registered on the server, as far as it knows */
  int count() {
    return registeredWaiters.size();
  }

  /** A waiter of any lock kind gave up, or was granted by a hand-off. */
  void forget(String waiterId) {
    registeredWaiters.remove(waiterId);
  }

  /**
   * The wake-up channel was subscribed again: a release published meanwhile went unheard, so every
   * registered waiter re-checks now rather than at its backstop.
   */
  void recheckAll(BackendContext context) {
    if (!registeredWaiters.isEmpty()) {
      log.debug("wake-up channel subscribed again; {} waiter(s) re-check", registeredWaiters.size());
      registeredWaiters.forEach((waiterId, name) -> context.wakeups().wake(name, waiterId));
    }
  }

  /**
   * A wake-up message: {@code "<waiterId> <tag><name>"}, where the one-character tag says which lock
   * kind's waiter queue it came from, so that a wake-up whose waiter is gone is passed on in that queue.
   */
  void onMessage(String channel, String message) {
    int space = message.indexOf(' ');
    BackendContext context = backend.context();
    if (!channel.equals(backend.channelPrefix() + context.clientId()) || space <= 0 || space + 2 > message.length()) {
      return;
    }
    if (message.charAt(0) == '!') {
      onEvictionNotice(message.substring(1, space), message.charAt(space + 1), message.substring(space + 2));
      return;
    }
    String waiterId = message.substring(0, space);
    char tag = message.charAt(space + 1);
    String name = message.substring(space + 2);
    if (!context.wakeups().wake(name, waiterId) && !backend.isClosed()) {
      LockOps ops = backend.opsForTag(tag);
      if (ops != null) {
        ops.passWakeup(name, waiterId);
      }
    }
  }

  /**
   * A notice from a script that removed a hold of this client (evict-notice.lua): {@code "!<owner>
   * <tag><name>"}. The client marks the lease of that owner, kind and name lost; it checks the owner id.
   */
  private void onEvictionNotice(String owner, char tag, String name) {
    HoldKind kind = holdKindForTag(tag);
    if (kind != null && !owner.isEmpty()) {
      log.debug("notice: hold of {} on '{}' ({}) was force-unlocked", owner, name, kind);
      backend.context().events().ownerEvicted(kind, name, owner, "force-unlocked");
    }
  }

  private static HoldKind holdKindForTag(char tag) {
    switch (tag) {
      case RedisBackend.EXCLUSIVE_TAG:
        return HoldKind.EXCLUSIVE;
      case RedisFairLock.TAG:
        return HoldKind.FAIR;
      case RedisSemaphore.TAG:
        return HoldKind.PERMIT;
      case RedisReadWriteOps.READ_TAG:
        return HoldKind.READ;
      case RedisReadWriteOps.WRITE_TAG:
        return HoldKind.WRITE;
      default:
        return null;
    }
  }
}
