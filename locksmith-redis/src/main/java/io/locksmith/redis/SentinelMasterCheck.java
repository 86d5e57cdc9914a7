package io.locksmith.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.codec.StringCodec;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sentinel: asks the sentinels, at most once a second, whether the node {@link RedisBackend} talks to is
 * still the master, and moves the connection pair if not. Thread-safe (one check at a time, guarded by a
 * flag); never throws to the caller whose command failed: a check that cannot be made is logged at DEBUG.
 */
final class SentinelMasterCheck {
  // the backend's logger: these lines were its own before the split
  private static final Logger log = LoggerFactory.getLogger(RedisBackend.class);
  /** Least time between two checks whether the sentinels still name our master. */
  private static final long MASTER_CHECK_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final RedisBackend backend;
  private final AtomicBoolean checkingMaster = new AtomicBoolean();
  private volatile long lastMasterCheck;

  SentinelMasterCheck(RedisBackend backend) {
    this.backend = backend;
  }

  /**
   * After a command timed out or was refused with {@code READONLY}, this client may be
   * talking to a node that is no longer the master without its connections having dropped (a hung
   * master, or a demoted one that kept them), and Lettuce reconnects only when a connection drops.
   * So ask the sentinels, at most once a second, and if they name another node, move both connections
   * there. A master that is merely slow keeps its connections: its address has not changed.
   */
  void afterFailure(Throwable failure) {
    if (RedisExceptions.mayBeStaleMaster(failure)) {
      soon();
    }
  }

  /** Sentinel only: asks the sentinels whether the master moved, at most once a second; see above. */
  void soon() {
    if (backend.isClosed() || !RedisLockClient.isSentinel(backend.uriForChecks())) {
      return;
    }
    long now = System.nanoTime();
    if (now - lastMasterCheck < MASTER_CHECK_INTERVAL_NANOS || !checkingMaster.compareAndSet(false, true)) {
      return;
    }
    lastMasterCheck = now;
    CompletableFuture<Boolean> check;
    try {
      check = checkMaster();
    } catch (RuntimeException e) { // e.g. closed meanwhile; the caller must still complete its command
      check = CompletableFuture.failedFuture(e);
    }
    check.whenComplete((moved, f) -> {
      checkingMaster.set(false);
      if (f != null) {
        log.debug("could not ask the sentinels of {}: {}", RedisLockClient.describe(backend.uriForChecks()), f.toString());
      }
    });
  }

  /** @return completes with whether the connections were found elsewhere and a move was started */
  private CompletableFuture<Boolean> checkMaster() {
    RedisClient c = backend.redisClient();
    if (c == null) {
      return CompletableFuture.completedFuture(false);
    }
    return c.connectSentinelAsync(StringCodec.UTF8, backend.uriForChecks()).thenCompose(sentinel -> sentinel.async()
        .getMasterAddrByName(backend.uriForChecks().getSentinelMasterId()).toCompletableFuture()
        .whenComplete((a, f) -> sentinel.closeAsync()))
        .thenApply(master -> {
          SocketAddress at = elsewhere(backend.commandConnection(), master);
          SocketAddress pubsubAt = elsewhere(backend.pubsubConnection(), master);
          if (master == null || (at == null && pubsubAt == null) || backend.isClosed()
              || !backend.connecting().compareAndSet(false, true)) {
            return false;
          }
          log.warn("the sentinels of {} name {} as master, but this client is connected to {}; moving there",
              RedisLockClient.describe(backend.uriForChecks()), hostPort(master), hostPort(at != null ? at : pubsubAt));
          backend.connect().whenComplete((v, f) -> {
            if (f != null) {
              log.warn("could not move to the master at {}: {}", hostPort(master), f.toString());
            }
          });
          return true;
        });
  }

  /** @return the address {@code c} is connected to if that is known and not {@code master}, else null */
  private SocketAddress elsewhere(Object c, SocketAddress master) {
    SocketAddress at = backend.connectedTo(c);
    return at == null || master == null || sameNode(at, master) ? null : at;
  }

  static String hostPort(SocketAddress a) {
    return a instanceof InetSocketAddress i ? i.getHostString() + ":" + i.getPort() : String.valueOf(a);
  }

  static boolean sameNode(SocketAddress a, SocketAddress b) {
    if (a instanceof InetSocketAddress x && b instanceof InetSocketAddress y) {
      return x.getPort() == y.getPort() && (x.getHostString().equals(y.getHostString())
          || (x.getAddress() != null && x.getAddress().equals(y.getAddress())));
    }
    return Objects.equals(a, b);
  }
}
