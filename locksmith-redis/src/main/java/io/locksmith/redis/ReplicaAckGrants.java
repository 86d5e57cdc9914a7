package io.locksmith.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.locksmith.BackendUnavailableException;
import io.locksmith.spi.AcquireReply;
import io.locksmith.spi.LockOps;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A fresh grant under replica acknowledgement ({@link RedisBackend#replicaAcknowledgement}): the lanes'
 * connections (one master or Sentinel; a Cluster's are {@link RedisClusterConnections#openLane}), the acquire
 * script and its {@code WAIT} on a connection borrowed from {@link ReplicaAckLanes}, the check that the
 * master did not move meanwhile (Sentinel), and the give-back of a grant too few replicas confirmed.
 *
 * <p>Thread-safe: it keeps no state of its own; the lanes and the backend are thread-safe. Failures
 * complete the returned stages exceptionally ({@link BackendUnavailableException} for a grant that does not
 * count), never throw.
 */
final class ReplicaAckGrants {
  private static final Logger log = LoggerFactory.getLogger(RedisBackend.class);

  private final RedisBackend backend;

  ReplicaAckGrants(RedisBackend backend) {
    this.backend = backend;
  }

  /**
   * Opens a connection for acknowledged grants (see {@link ReplicaAckLanes}) to the node the shared command
   * connection is on. Through Sentinel that is the address the shared connection reports, not a fresh
   * lookup: a grant must land where this client's renewals and releases go, or it would be made on a newly
   * promoted master while they still time out on the old one. When the shared pair moves, the lanes are
   * retired ({@link RedisBackend#connect}) and new ones follow it. Scripts need no loading: the script cache is the
   * server's.
   */
  CompletableFuture<ReplicaAckLanes.Lane> openLane() {
    RedisClient c = backend.redisClient();
    if (c == null || backend.isClosed()) {
      return CompletableFuture.failedFuture(new BackendUnavailableException("client of " + backend.description()
          + " is closed"));
    }
    RedisURI uri = backend.uri();
    Duration commandTimeout = backend.commandTimeout();
    RedisURI target = uri;
    SocketAddress at = null;
    if (RedisLockClient.isSentinel(uri)) {
      at = backend.commandNode();
      if (!(at instanceof InetSocketAddress master)) {
        return CompletableFuture.failedFuture(new BackendUnavailableException("Redis " + backend.description()
            + " is not connected"));
      }
      RedisURI.Builder direct = RedisURI.Builder.redis(master.getHostString(), master.getPort()).withSsl(uri)
          .withAuthentication(uri).withDatabase(uri.getDatabase()).withTimeout(commandTimeout);
      if (uri.getClientName() != null) {
        direct.withClientName(uri.getClientName());
      }
      target = direct.build();
    }
    // a node that cannot be connected to (e.g. it hangs) may be a master the sentinels have replaced; the
    // shared connection, perhaps idle, would not find out by itself
    RedisURI laneTarget = target;
    // Sentinel: the master this lane is opened to, which a grant on it must still be when it is reported
    SocketAddress node = at;
    return LostHandshake.connect(() -> c.connectAsync(Utf8Codec.INSTANCE, laneTarget)).whenComplete((conn, f) -> {
      if (f != null) {
        backend.checkMasterSoon();
      }
    }).thenApply(conn -> {
      conn.setTimeout(commandTimeout);
      return new ReplicaAckLanes.Lane() {
        @Override
        public RedisClusterAsyncCommands<String, String> commands() {
          return conn.async();
        }

        @Override
        public SocketAddress node() {
          return node;
        }

        @Override
        public CompletableFuture<Long> waitForReplicas(String key, int replicas, long timeoutMillis) {
          return conn.async().waitForReplication(replicas, timeoutMillis).toCompletableFuture();
        }

        @Override
        public void close() {
          conn.closeAsync();
        }
      };
    });
  }

  /**
   * Runs the acquire on a borrowed lane and has a grant confirmed (see
   * {@link RedisBackend#runAcquire(LockOps, RedisScript, RedisBackend.AcquireCall, String, String,
   * io.locksmith.spi.AcquireMode, String)}).
   *
   * @param send sends the script on the given connection's commands
   */
  CompletionStage<AcquireReply> run(ReplicaAckLanes l, LockOps ops, RedisBackend.AcquireCall call, String name,
      String owner, String waiterId,
      Function<RedisClusterAsyncCommands<String, String>, CompletableFuture<AcquireReply>> send) {
    CompletableFuture<AcquireReply> out = new CompletableFuture<>();
    long[] generationLent = {-1};
    l.borrow().handle((lane, f) -> {
      if (f != null) {
        return CompletableFuture.<AcquireReply>failedFuture(RedisExceptions.translate(f, call.what()));
      }
      generationLent[0] = lane.generation();
      return backend.trackWaiter(name, waiterId, send.apply(lane.lane().commands())).handle((reply, failed) -> {
        if (failed != null) {
          laneFailed(l, lane, failed);
          return CompletableFuture.<AcquireReply>failedFuture(failed);
        }
        if (!reply.granted()) {
          l.giveBack(lane, true);
          return CompletableFuture.completedFuture(reply);
        }
        return laneGrantHeld(name).thenCompose(v -> masterMoved(l, lane)
            ? grantOnFormerMaster(l, lane, ops, name, owner)
            : confirmByReplicas(l, lane, ops, call.keys()[0], name, owner, reply));
      }).thenCompose(Function.identity());
    }).thenCompose(Function.identity()).whenComplete((reply, failure) -> {
      if (failure != null) {
        out.completeExceptionally(failure);
        return;
      }
      out.complete(reply); // the caller makes its lease here, on this thread, if it is listening already
      if (reply.granted() && generationLent[0] != -1 && l.generationNow() != generationLent[0]) {
        // the move to another master happened between the last check and the lease: have every lease
        // verified now, this one included (the move's own verification may have run before it existed)
        backend.context().events().connectionRestored();
      }
    });
    return out;
  }

  /**
   * Sentinel: whether a grant made on {@code lane} must not be reported because this client no longer
   * talks to the master the lane is connected to: the shared command connection is down, or on another node
   * (the pair moved there because the sentinels name it, or Lettuce reconnected it there by itself when the
   * old master dropped its connections). A grant there may be missing on the master the sentinels promoted,
   * which can grant the lock to another client; this client's renewals and releases go there too, not to
   * the former master. Finding another node retires every lane. (Lanes retired only because one of them
   * timed out on a master that still serves this client keep their grants: they were made where this
   * client's renewals go.)
   */
  private boolean masterMoved(ReplicaAckLanes l, ReplicaAckLanes.Borrowed lane) {
    if (!backend.throughSentinel()) {
      return false; // one fixed node (a Cluster follows its slots itself)
    }
    SocketAddress laneNode = lane.lane().node();
    SocketAddress sharedNode = backend.commandNode();
    if (laneNode != null && sharedNode != null && backend.commandUp() && SentinelMasterCheck.sameNode(laneNode, sharedNode)) {
      return false;
    }
    if (laneNode != null && sharedNode != null && !SentinelMasterCheck.sameNode(laneNode, sharedNode)) {
      l.retireAll(); // every lane leads to the former master
    }
    return true;
  }

  /**
   * A grant made on a lane whose master this client has left ({@link #masterMoved}): not reported as a
   * grant. It is given back on that lane, best effort (the former master may hang, or may already have
   * dropped it when it became a replica), and the attempt fails as an outage, so that a waiting
   * acquisition tries again, on the master this client talks to now.
   */
  private CompletionStage<AcquireReply> grantOnFormerMaster(ReplicaAckLanes l, ReplicaAckLanes.Borrowed lane,
      LockOps ops, String name, String owner) {
    log.info("lock '{}' was granted by the former master of {} after this client moved away from it; not"
        + " counted as a grant, given back there", name, backend.description());
    CompletionStage<Integer> back;
    try {
      back = backend.dispatch().releaseOn(lane.lane().commands(), () -> ops.release(name, owner, true));
    } catch (RuntimeException e) {
      back = CompletableFuture.failedFuture(e);
    }
    back.whenComplete((left, f) -> {
      if (f != null) {
        log.debug("could not give back '{}' on the former master: {}", name, f.toString());
      }
      l.giveBack(lane, false);
    });
    return CompletableFuture.failedFuture(new BackendUnavailableException("lock '" + name + "' was granted by"
        + " the former master of " + backend.description() + " after the master moved; that grant does not count"));
  }



  private CompletionStage<?> laneGrantHeld(String name) {
    Function<String, CompletionStage<?>> hook = backend.laneGrantHook;
    return hook == null ? CompletableFuture.completedFuture(null) : hook.apply(name);
  }

  /**
   * A command on a lane failed: the lane is closed (it may still have the command in flight). Through
   * Sentinel a timeout or {@code READONLY} may mean the master hangs or was demoted, which every lane shares:
   * they are all retired, so the next grants connect to whatever master the sentinels name then.
   */
  private void laneFailed(ReplicaAckLanes l, ReplicaAckLanes.Borrowed lane, Throwable failure) {
    l.giveBack(lane, false);
    if (backend.throughSentinel() && RedisExceptions.mayBeStaleMaster(failure)) {
      l.retireAll();
    }
  }

  /**
   * {@code WAIT} on the lane that carried the grant, then gives the lane back. Redis counts the replicas
   * that have this connection's writes so far, so the grant is among them. A {@code WAIT} that fails (e.g.
   * times out on a hung server) counts as no acknowledgement.
   */
  private CompletionStage<AcquireReply> confirmByReplicas(ReplicaAckLanes l, ReplicaAckLanes.Borrowed lane,
      LockOps ops, String key, String name, String owner, AcquireReply grant) {
    CompletableFuture<Long> acks;
    try {
      // on a Cluster: on the lane's connection to the master of the lock's slot, which carried the grant
      acks = lane.lane().waitForReplicas(key, backend.replicaAcks(), backend.replicaAckTimeoutMillis());
    } catch (RuntimeException e) {
      acks = CompletableFuture.failedFuture(e);
    }
    return acks.handle((n, f) -> {
      // the master may have moved while WAIT blocked (a hung master's WAIT ends with the command timeout)
      if (masterMoved(l, lane)) {
        return grantOnFormerMaster(l, lane, ops, name, owner);
      }
      if (f != null) {
        log.debug("WAIT for replicas after granting '{}' failed: {}", name, f.toString());
        laneFailed(l, lane, f);
      } else {
        l.giveBack(lane, true);
      }
      return acknowledged(ops, name, owner, grant, n == null ? 0 : n.intValue());
    }).thenCompose(Function.identity());
  }

  /** A grant {@code n} replicas acknowledged: reported, or given back if the policy requires more. */
  private CompletionStage<AcquireReply> acknowledged(LockOps ops, String name, String owner, AcquireReply grant,
      int n) {
    if (n >= backend.replicaAcks() || !backend.replicaAcksRequired()) {
      return CompletableFuture.completedFuture(grant.withReplicasAcknowledged(n));
    }
    // too few copies: give the grant back on the shared connection (and wait for that, so the next
    // attempt cannot be undone)
    return ops.release(name, owner, true).handle((v, f) -> v).thenCompose(v -> CompletableFuture.failedFuture(
        new BackendUnavailableException("lock '" + name + "' was granted by " + backend.description() + " but only "
            + n + " of " + backend.replicaAcks() + " required replicas confirmed it within " + backend.replicaAckTimeoutMillis()
            + " ms; the grant was released")));
  }
}
