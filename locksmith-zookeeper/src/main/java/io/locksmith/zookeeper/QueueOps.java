package io.locksmith.zookeeper;

import io.locksmith.BackendUnavailableException;
import io.locksmith.LockException;
import io.locksmith.LockInfo;
import io.locksmith.PermitHolder;
import io.locksmith.SemaphoreInfo;
import io.locksmith.SemaphoreState;
import io.locksmith.spi.AcquireMode;
import io.locksmith.spi.AcquireReply;
import io.locksmith.spi.RenewRequest;
import io.locksmith.spi.SemaphoreOps;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.data.Stat;

/**
 * The operations of one side ({@link Side}) on ephemeral-sequential nodes. Each lock name is a parent
 * node; each acquisition is one child created by its owner, which holds when the side's rule says so
 * and otherwise watches one node ahead of it. Replies are chained on ZooKeeper's event thread and never
 * block. Thread-safe; the per-owner state lives in the backend's {@link Hold}s.
 *
 * <p>An acquisition's rounds share its node: the first round creates it, later rounds (after a wake-up,
 * a backstop or a failed attempt) find it again, by path or, when a create went unanswered, by its
 * protected prefix. A waiter that gives up deletes it. A node found twice for one owner (Curator retried
 * a create whose reply was lost) keeps the earlier place and the other is deleted.
 */
final class QueueOps implements SemaphoreOps {
  /** Rounds within one attempt that may restart because the watched node went away meanwhile. */
  private static final int MAX_LOOPS = 8;

  private final ZooKeeperBackend backend;
  private final Side side;
  private final int declaredPermits;

  QueueOps(ZooKeeperBackend backend, Side side, int declaredPermits) {
    this.backend = backend;
    this.side = side;
    this.declaredPermits = declaredPermits;
  }

  Side side() {
    return side;
  }

  private String what(String action, String name) {
    return action + " " + (side == Side.PERMIT ? "a permit of semaphore" : side.name().toLowerCase(java.util.Locale.ROOT)
        + " lock") + " '" + name + "'";
  }

  // ------------------------------------------------------------------ acquire

  @Override
  public CompletionStage<AcquireReply> acquire(String name, String owner, long leaseMillis, AcquireMode mode,
      String waiterId) {
    long started = System.nanoTime();
    String what = what("acquire", name);
    try {
      backend.ensureOpen(what);
      Hold.Key key = new Hold.Key(side, name, owner);
      if (mode == AcquireMode.REENTER) {
        Hold h = backend.hold(key);
        return h == null ? CompletableFuture.completedFuture(AcquireReply.lostHold()) : reenter(h, leaseMillis, started, what);
      }
      Hold h = backend.holdFor(key);
      boolean leftover;
      synchronized (h) {
        leftover = h.granted && !h.lost;
      }
      if (leftover) {
        // an earlier attempt of the same acquisition was granted without its caller hearing of it: that
        // grant becomes this one, with one hold
        return reenter(h, leaseMillis, started, what).thenCompose(r -> {
          if (r.granted()) {
            synchronized (h) {
              h.holds = 1;
            }
            return CompletableFuture.completedFuture(AcquireReply.granted(r.fencingToken(), 1));
          }
          backend.forget(h);
          return attempt(backend.holdFor(key), leaseMillis, started, waiterId, 0, what);
        });
      }
      return attempt(h, leaseMillis, started, waiterId, 0, what);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(Zk.translate(what, e));
    }
  }

  /** Re-entry: one more hold if the node is still this owner's, in a session still this client's. */
  private CompletableFuture<AcquireReply> reenter(Hold h, long leaseMillis, long started, String what) {
    String path;
    synchronized (h) {
      if (!h.granted || h.lost || h.gone || h.path == null) {
        return CompletableFuture.completedFuture(AcquireReply.lostHold());
      }
      path = h.path;
    }
    return stat(path, what).thenApply(stat -> {
      synchronized (h) {
        if (stat == null || stat.getEphemeralOwner() != h.session || h.lost || h.gone || !h.granted
            || backend.sessions().isOver(h.session)) {
          return AcquireReply.lostHold();
        }
        h.holds++;
        backend.extend(h, started, leaseMillis);
        return AcquireReply.granted(h.czxid, h.holds);
      }
    });
  }

  private CompletableFuture<AcquireReply> attempt(Hold h, long leaseMillis, long started, String waiterId, int loops,
      String what) {
    backend.setWaiter(h, waiterId);
    boolean fresh;
    synchronized (h) {
      fresh = h.path == null && !h.uncertain && !h.gone && !backend.sessions().isOver(h.session);
    }
    if (fresh) {
      // The listing is sent right behind the create, without waiting for its reply: on one connection
      // the server handles them in order, so the listing already shows the new node, and an uncontended
      // acquire takes one round trip instead of two. If it does not (Curator had to create the parents
      // first), the node is listed again once created.
      CompletableFuture<Void> created = create(h, leaseMillis, what);
      CompletableFuture<Snapshot> listed = snapshot(h.parent, what);
      return created.thenCombine(listed.handle((snap, failure) -> snap), (v, snap) -> snap)
          .thenCompose(snap -> snap != null && lists(snap, h) ? CompletableFuture.completedFuture(snap)
              : snapshot(h.parent, what))
          .thenCompose(snap -> decide(h, snap, leaseMillis, started, waiterId, loops, what));
    }
    return ensureNode(h, leaseMillis, what)
        .thenCompose(v -> snapshot(h.parent, what))
        .thenCompose(snap -> decide(h, snap, leaseMillis, started, waiterId, loops, what));
  }

  /** @return whether {@code snap} lists the hold's node */
  private static boolean lists(Snapshot snap, Hold h) {
    String own;
    synchronized (h) {
      own = h.path == null ? null : h.path.substring(h.parent.length() + 1);
    }
    for (NodeNames.Node n : snap.queue()) {
      if (n.name().equals(own)) {
        return true;
      }
    }
    return false;
  }

  /** Makes sure the owner has a node: the one it has, one found by its prefix, or a new one. */
  private CompletableFuture<Void> ensureNode(Hold h, long leaseMillis, String what) {
    boolean search;
    synchronized (h) {
      if (h.gone) {
        return CompletableFuture.failedFuture(new IllegalStateException(what + ": the client is closed"));
      }
      if (h.path != null && backend.sessions().isOver(h.session)) {
        backend.deleteQuietly(h.path); // the old session's node, if the server still has it
        h.path = null;
      }
      if (h.path != null) {
        return CompletableFuture.completedFuture(null);
      }
      search = h.uncertain;
    }
    CompletableFuture<Boolean> found = search ? findByPrefix(h, what) : CompletableFuture.completedFuture(false);
    return found.thenCompose(had -> had ? CompletableFuture.completedFuture(null) : create(h, leaseMillis, what));
  }

  /** After an unanswered create: adopts the owner's earliest node under the parent, deletes the others. */
  private CompletableFuture<Boolean> findByPrefix(Hold h, String what) {
    return backend.zk().call(what, cb -> backend.curator().getChildren().inBackground(cb).forPath(h.parent), Code.NONODE)
        .thenCompose(event -> {
          if (Zk.code(event) == Code.NONODE) {
            synchronized (h) {
              h.uncertain = false;
            }
            return CompletableFuture.completedFuture(false);
          }
          List<NodeNames.Node> mine = new ArrayList<>();
          for (NodeNames.Node n : NodeNames.queue(event.getChildren())) {
            if (n.prefix().equals(h.prefix)) {
              mine.add(n);
            }
          }
          for (int i = 1; i < mine.size(); i++) {
            backend.deleteQuietly(h.parent + "/" + mine.get(i).name());
          }
          if (mine.isEmpty()) {
            synchronized (h) {
              h.uncertain = false;
            }
            return CompletableFuture.completedFuture(false);
          }
          String path = h.parent + "/" + mine.get(0).name();
          return stat(path, what).thenApply(stat -> {
            if (stat != null && backend.handleSession() == 0) { // whose node it is cannot be told now: next round
              throw new BackendUnavailableException(what + ": the connection to ZooKeeper dropped");
            }
            synchronized (h) {
              h.uncertain = false;
              if (stat == null) {
                return false;
              }
              if (!ofCurrentSession(stat)) {
                // created in an earlier session of this client that the server has not expired yet: its
                // life is not this session's, so it is no grant of ours; deleted, and a node made anew
                backend.deleteQuietly(path);
                return false;
              }
              adopt(h, path, stat);
              return true;
            }
          });
        });
  }

  /**
   * @return whether a node belongs to the session the client's handle is in now; a node of any other
   *     session (an earlier one of this client, or a stranger's) must be neither adopted nor granted, since
   *     it lives and dies with that session (the situation of Curator's CURATOR-498)
   */
  private boolean ofCurrentSession(Stat stat) {
    long current = backend.handleSession();
    return current != 0 && stat.getEphemeralOwner() == current && !backend.sessions().isOver(current);
  }

  /** Guarded by h. */
  private void adopt(Hold h, String path, Stat stat) {
    h.path = path;
    h.czxid = stat.getCzxid();
    h.session = stat.getEphemeralOwner();
  }

  private CompletableFuture<Void> create(Hold h, long leaseMillis, String what) {
    byte[] data = backend.nodeData(h.key.owner(), leaseMillis, false);
    long sent = System.nanoTime();
    long session = backend.handleSession();
    Stat created = new Stat();
    return backend.zk().call(what, cb -> {
      if (side == Side.PERMIT) { // the semaphore's parent holds its permit count: a persistent node
        backend.curator().create().storingStatIn(created).creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
            .withACL(backend.nodeAcl(), true).inBackground(cb).forPath(h.parent + "/" + h.prefix, data);
      } else {
        backend.curator().create().storingStatIn(created).creatingParentContainersIfNeeded()
            .withMode(CreateMode.EPHEMERAL_SEQUENTIAL).withACL(backend.nodeAcl(), true).inBackground(cb)
            .forPath(h.parent + "/" + h.prefix, data);
      }
    }, late -> lateCreate(h, late)).handle((event, failure) -> {
      if (failure != null) {
        RuntimeException e = Zk.translate(what, failure);
        if (e instanceof BackendUnavailableException) {
          synchronized (h) {
            h.uncertain = true; // it may have been created: look for it before creating another
          }
          backend.uncertainCreate(h.parent);
        }
        throw e;
      }
      Stat stat = event.getStat() != null ? event.getStat() : created;
      String path = event.getName();
      boolean orphan;
      synchronized (h) {
        orphan = h.gone;
        if (!orphan) {
          h.path = path;
          h.czxid = stat.getCzxid();
          h.session = stat.getEphemeralOwner();
          h.uncertain = false;
        }
      }
      // a create goes through the leader: its answer proves the session as a sync does (see Sessions)
      proven(session, sent);
      if (orphan) { // the acquisition ended while the create was on its way
        backend.deleteQuietly(path);
        throw new IllegalStateException(what + ": the acquisition ended");
      }
      if (stat.getCzxid() == 0) {
        throw new LockException(what + ": ZooKeeper did not report the new node's zxid", null);
      }
      return null;
    });
  }

  /**
   * A create answered after its caller gave up on it: the node exists. A hold still looking for its node
   * adopts it; otherwise (the acquisition ended, or it has found or made another node) it is deleted, so
   * that it cannot block the lock for the life of the session.
   */
  private void lateCreate(Hold h, CuratorEvent event) {
    if (Zk.code(event) != Code.OK || event.getName() == null) {
      return;
    }
    String path = event.getName();
    Stat stat = event.getStat();
    synchronized (h) {
      if (!h.gone && h.path == null && stat != null && stat.getCzxid() != 0 && ofCurrentSession(stat)) {
        adopt(h, path, stat);
        h.uncertain = false;
        return;
      }
      if (path.equals(h.path)) {
        return;
      }
    }
    backend.deleteQuietly(path);
  }

  /**
   * The lock parent's nodes in rule order; for a semaphore its permit count, for a read-write lock the
   * last write phase's record.
   */
  record Snapshot(List<NodeNames.Node> queue, int permits, RwRecord rw) {
    long boundary() {
      return rw == null ? 0 : rw.boundary();
    }
  }

  /**
   * What a read-write lock's parent stores: {@code "<token> <boundary>"}, the last write grant's token and
   * the boundary of the last write phase that ended (0 while a writer holds).
   *
   * @param token the last write token, or the parent's creation zxid if no writer recorded one
   * @param boundary read nodes up to this sequence are entitled
   */
  record RwRecord(long token, long boundary) {
    static RwRecord parse(byte[] data, Stat stat) {
      long token = 0;
      long boundary = 0;
      if (data != null && data.length > 0) {
        String[] parts = new String(data, StandardCharsets.US_ASCII).trim().split(" ");
        try {
          token = Long.parseLong(parts[0]);
          boundary = parts.length > 1 ? Long.parseLong(parts[1]) : 0;
        } catch (NumberFormatException notOurs) {
          token = 0;
          boundary = 0;
        }
      }
      return new RwRecord(token > 0 ? token : stat.getCzxid(), boundary);
    }

    byte[] encode() {
      return (token + " " + boundary).getBytes(StandardCharsets.US_ASCII);
    }
  }

  private CompletableFuture<Snapshot> snapshot(String parent, String what) {
    CompletableFuture<List<NodeNames.Node>> children = backend.zk()
        .call(what, cb -> backend.curator().getChildren().inBackground(cb).forPath(parent), Code.NONODE)
        .thenApply(e -> Zk.code(e) == Code.NONODE ? List.of() : NodeNames.queue(e.getChildren()));
    if (side == Side.PERMIT) {
      return children.thenCombine(permits(parent, what), (q, p) -> new Snapshot(q, p, null));
    }
    if (side == Side.READ || side == Side.WRITE) {
      // the record after the listing, on the same connection: it is at least as new as the listing, so
      // a listing without the last writer comes with the boundary that writer recorded as it left
      return children.thenCompose(q -> rwRecord(parent, what).thenApply(r -> new Snapshot(q, 0, r)));
    }
    return children.thenApply(q -> new Snapshot(q, 0, null));
  }

  private CompletableFuture<RwRecord> rwRecord(String parent, String what) {
    return backend.zk().call(what, cb -> backend.curator().getData().inBackground(cb).forPath(parent), Code.NONODE)
        .thenApply(e -> Zk.code(e) == Code.NONODE ? new RwRecord(0, 0) : RwRecord.parse(e.getData(), e.getStat()));
  }

  /**
   * Ends a write phase: deletes the write node and, in the same transaction, records the boundary (the
   * highest sequence queued now: those readers are entitled to read before the next writer) with the last
   * write token. A node created after the listing has a higher sequence and is not entitled.
   *
   * @param token the write's token if known, else a negative value (it is read from the parent)
   * @return whether the node was still there
   */
  CompletableFuture<Boolean> endWritePhase(String parent, String node, long token, String what) {
    CompletableFuture<Long> boundary = backend.zk()
        .call(what, cb -> backend.curator().getChildren().inBackground(cb).forPath(parent), Code.NONODE)
        .thenApply(e -> {
          long max = 0;
          if (Zk.code(e) == Code.OK) {
            for (NodeNames.Node n : NodeNames.queue(e.getChildren())) {
              max = Math.max(max, n.sequence());
            }
          }
          return max;
        });
    CompletableFuture<Long> last = token > 0 ? CompletableFuture.completedFuture(token)
        : rwRecord(parent, what).thenApply(RwRecord::token);
    return boundary.thenCombine(last, (b, t) -> new RwRecord(t, b).encode()).thenCompose(data -> backend.zk()
        .call(what, cb -> backend.curator().transaction().inBackground(cb).forOperations(
            backend.curator().transactionOp().delete().forPath(node),
            backend.curator().transactionOp().setData().forPath(parent, data)), Code.NONODE)
        .thenApply(e -> Zk.code(e) == Code.OK));
  }

  /** The semaphore's stored permit count; the declared count is stored if none is. */
  private CompletableFuture<Integer> permits(String parent, String what) {
    return backend.zk().call(what, cb -> backend.curator().getData().inBackground(cb).forPath(parent), Code.NONODE)
        .thenCompose(e -> {
          if (Zk.code(e) == Code.NONODE) {
            return CompletableFuture.completedFuture(declaredPermits);
          }
          int stored = parsePermits(e.getData());
          if (stored > 0) {
            return CompletableFuture.completedFuture(stored);
          }
          int version = e.getStat().getVersion();
          byte[] count = Integer.toString(declaredPermits).getBytes(StandardCharsets.US_ASCII);
          return backend.zk().call(what, cb -> backend.curator().setData().withVersion(version).inBackground(cb)
              .forPath(parent, count), Code.BADVERSION, Code.NONODE)
              .thenCompose(set -> Zk.code(set) == Code.OK ? CompletableFuture.completedFuture(declaredPermits)
                  : permits(parent, what)); // stored by someone else meanwhile
        });
  }

  static int parsePermits(byte[] data) {
    if (data == null || data.length == 0) {
      return 0;
    }
    try {
      int p = Integer.parseInt(new String(data, StandardCharsets.US_ASCII).trim());
      return Math.max(p, 0);
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  private CompletableFuture<AcquireReply> decide(Hold h, Snapshot snap, long leaseMillis, long started,
      String waiterId, int loops, String what) {
    String own;
    synchronized (h) {
      own = h.path == null ? null : h.path.substring(h.parent.length() + 1);
    }
    int index = -1;
    List<NodeNames.Node> queue = snap.queue();
    NodeNames.Node earliestDuplicate = null;
    for (int i = 0; i < queue.size(); i++) {
      NodeNames.Node n = queue.get(i);
      if (n.name().equals(own)) {
        index = i;
      } else if (n.prefix().equals(h.prefix)) { // a second node of this owner: a create retried after a lost reply
        if (index < 0 && earliestDuplicate == null) {
          earliestDuplicate = n;
        } else {
          backend.deleteQuietly(h.parent + "/" + n.name());
        }
      }
    }
    if (index >= 0 && earliestDuplicate != null) {
      // the earlier node keeps the owner's place in the queue: continue with it, drop the later one
      backend.deleteQuietly(h.path);
      synchronized (h) {
        h.path = null;
        h.uncertain = true;
      }
      return attempt(h, leaseMillis, started, waiterId, loops + 1, what);
    }
    if (index < 0) { // our node is gone (session expired, deleted by an operator): queue again
      synchronized (h) {
        h.path = null;
        h.uncertain |= earliestDuplicate != null; // another node of ours is there: continue with it
      }
      return loops < MAX_LOOPS ? attempt(h, leaseMillis, started, waiterId, loops + 1, what)
          : CompletableFuture.failedFuture(new BackendUnavailableException(what + ": the node keeps disappearing"));
    }
    int position = index;
    if (queue.get(index).sequence() >= NodeNames.LAST_SEQUENCE) {
      // the parent's create counter is used up: this node and every later one share the last sequence, so
      // no rule can tell which came first; refuse rather than grant in an order that is not arrival order
      return backend.giveUp(h).thenCompose(v -> CompletableFuture.failedFuture(new LockException(what
          + ": ZooKeeper has used up the sequence numbers of its node " + h.parent + " (2^31 - 1 creates under"
          + " one parent; every newer node gets the same number, so their order cannot be told). The count"
          + " starts again when that node is deleted: a lock's node goes by itself once no acquisition is left"
          + " under it; a semaphore's is persistent and must be deleted by an operator while nobody holds a"
          + " permit (its permit count, stored there, is then set again from the declared count)", null)));
    }
    Side.Decision decision = side.decide(queue, index, snap.permits(), snap.boundary());
    if (decision.granted()) {
      long session;
      synchronized (h) {
        session = h.session;
      }
      long current = backend.handleSession();
      if (current == 0) { // the connection dropped: which session the node's grant would live in is unknown
        return CompletableFuture.failedFuture(new BackendUnavailableException(what
            + ": the connection to ZooKeeper dropped before the grant"));
      }
      if (session != current) { // a node of an earlier session: it lives and dies with that one, never granted
        String stale;
        synchronized (h) {
          stale = h.path;
          h.path = null;
        }
        backend.deleteQuietly(stale);
        return loops < MAX_LOOPS ? attempt(h, leaseMillis, started, waiterId, loops + 1, what)
            : CompletableFuture.failedFuture(new BackendUnavailableException(what + ": the session keeps changing"));
      }
      if (!provenFor(current)) {
        // nothing answered through the leader proves this session (a new one whose create was sent while
        // the handle had none), or its proof is old: reported now, the loss check would declare the grant
        // lost at once and delete its node. Prove it with a sync sent in it, then decide again
        return loops < MAX_LOOPS ? prove(h.parent, what).thenCompose(v -> decide(h, snap, leaseMillis, started,
            waiterId, loops + 1, what)) : CompletableFuture.failedFuture(new BackendUnavailableException(what
            + ": no request of the ZooKeeper session was answered through the leader"));
      }
      int taken = index + 1; // in arrival order, every node ahead of a granted permit holds one
      return grant(h, snap, index, leaseMillis, started, what).thenApply(r -> counted(r, snap.permits(), taken));
    }
    // refused: the first `permits` nodes ahead hold (more if the count was lowered since they entered)
    int taken = Math.min(index, snap.permits());
    if (waiterId == null || decision.watch() == null) { // may not wait: leave the queue before answering
      return backend.giveUp(h).thenApply(v -> counted(AcquireReply.busy(backend.recheckMillis()), snap.permits(), taken));
    }
    String watched = h.parent + "/" + decision.watch().name();
    return backend.zk().call(what, cb -> backend.curator().checkExists().usingWatcher(h.watcher).inBackground(cb)
        .forPath(watched), Code.NONODE).thenCompose(e -> {
          Stat stat = e.getStat();
          if (stat == null) { // gone between the listing and the watch: look again
            return loops < MAX_LOOPS ? attempt(h, leaseMillis, started, waiterId, loops + 1, what)
                : CompletableFuture.completedFuture(AcquireReply.busy(1));
          }
          AcquireReply busy = counted(AcquireReply.busy(backend.recheckMillis()), snap.permits(), taken);
          if (side == Side.PERMIT && stat.getVersion() > 0) {
            // set after the listing: a release or a raise in between would otherwise wake nobody
            return watchPermits(h, snap, position, what).thenCompose(changed -> !changed ? CompletableFuture.completedFuture(busy)
                : loops < MAX_LOOPS ? attempt(h, leaseMillis, started, waiterId, loops + 1, what)
                : CompletableFuture.completedFuture(AcquireReply.busy(1)));
          }
          return CompletableFuture.completedFuture(busy);
        });
  }

  /** A semaphore's reply tells the permit count in force and how many were taken. */
  private AcquireReply counted(AcquireReply reply, int permits, int taken) {
    return side == Side.PERMIT && permits > 0 ? reply.withPermits(permits, taken) : reply;
  }

  /**
   * The first permit waiter also watches the list of nodes (a release) and the count (a raise).
   *
   * @param index this waiter's position in {@code snap}
   * @return whether the count or the nodes ahead changed since {@code snap} was taken (the watches then
   *     came too late for that change); newcomers behind do not matter
   */
  private CompletableFuture<Boolean> watchPermits(Hold h, Snapshot snap, int index, String what) {
    CompletableFuture<CuratorEvent> list = backend.zk().call(what, cb -> backend.curator().getChildren()
        .usingWatcher(h.watcher).inBackground(cb).forPath(h.parent), Code.NONODE);
    CompletableFuture<CuratorEvent> count = backend.zk().call(what, cb -> backend.curator().getData()
        .usingWatcher(h.watcher).inBackground(cb).forPath(h.parent), Code.NONODE);
    return list.thenCombine(count, (l, c) -> {
      List<NodeNames.Node> now = l.getChildren() == null ? List.of() : NodeNames.queue(l.getChildren());
      List<NodeNames.Node> ahead = snap.queue().subList(0, index + 1);
      int permits = Zk.code(c) == Code.OK ? parsePermits(c.getData()) : 0;
      return now.size() <= index || !now.subList(0, index + 1).equals(ahead)
          || (permits > 0 && permits != snap.permits());
    });
  }

  private CompletableFuture<AcquireReply> grant(Hold h, Snapshot snap, int index, long leaseMillis,
      long started, String what) {
    CompletableFuture<Long> token;
    long czxid;
    String path;
    synchronized (h) {
      czxid = h.czxid;
      path = h.path;
    }
    switch (side) {
      case WRITE: { // record the token for later readers (a write phase: no boundary), only while the node is ours
        byte[] data = new RwRecord(czxid, 0).encode();
        token = backend.zk().call(what, cb -> backend.curator().transaction().inBackground(cb).forOperations(
            backend.curator().transactionOp().check().forPath(path),
            backend.curator().transactionOp().setData().forPath(h.parent, data)), Code.NONODE)
            .thenApply(e -> Zk.code(e) == Code.OK ? czxid : -1L);
        break;
      }
      case READ:
        token = readToken(h, snap, what);
        break;
      case PERMIT: { // mark the permit as held: for describe(), and it wakes the next waiter
        byte[] data = backend.nodeData(h.key.owner(), leaseMillis, true);
        token = backend.zk().call(what, cb -> backend.curator().setData().inBackground(cb).forPath(path, data),
            Code.NONODE).thenApply(e -> Zk.code(e) == Code.OK ? czxid : -1L);
        break;
      }
      default:
        token = CompletableFuture.completedFuture(czxid);
    }
    return token.thenCompose(t -> {
      if (t < 0) { // the node went away under us: queue again
        synchronized (h) {
          h.path = null;
        }
        return attempt(h, leaseMillis, started, h.waiterId, MAX_LOOPS - 1, what);
      }
      if (!backend.granted(h, started, leaseMillis)) {
        return CompletableFuture.failedFuture(new IllegalStateException(what + ": the acquisition ended"));
      }
      return CompletableFuture.completedFuture(AcquireReply.granted(t, 1));
    });
  }

  /**
   * A read carries the token of the latest write: its own owner's write when it is a downgrade, else the
   * token the last writer recorded on the parent, or the parent's creation zxid if no writer has held
   * it since the parent was created (larger than every token granted before that).
   */
  private CompletableFuture<Long> readToken(Hold h, Snapshot snap, String what) {
    List<NodeNames.Node> queue = snap.queue();
    for (int i = 0; i < queue.size(); i++) {
      NodeNames.Node n = queue.get(i);
      if (n.tag() == Side.WRITE.tag && n.ownerKey().equals(h.ownerKey)) {
        Hold write = backend.hold(new Hold.Key(Side.WRITE, h.name(), h.key.owner()));
        if (write != null) {
          synchronized (write) {
            if (write.path != null && write.path.endsWith("/" + n.name())) {
              return CompletableFuture.completedFuture(write.czxid);
            }
          }
        }
        return stat(h.parent + "/" + n.name(), what).thenApply(s -> s == null ? -1L : s.getCzxid());
      }
    }
    // read after the listing that granted this read: no writer came in between
    return snap.rw() != null ? CompletableFuture.completedFuture(snap.rw().token()) : recordedWriteToken(h.parent, what);
  }

  private CompletableFuture<Long> recordedWriteToken(String parent, String what) {
    return rwRecord(parent, what).thenApply(RwRecord::token);
  }

  CompletableFuture<Stat> stat(String path, String what) {
    return backend.zk().call(what, cb -> backend.curator().checkExists().inBackground(cb).forPath(path), Code.NONODE)
        .thenApply(CuratorEvent::getStat); // a read proves nothing of the session (see Sessions)
  }

  /**
   * Whether {@code session} is proven through the leader for long enough that a grant reported now is not
   * declared lost at once: its loss bound is at least two heartbeats away. The heartbeat keeps a session
   * that reaches its leader well within that, so a grant costs a request more only when nothing proves
   * its session: a new one, or one whose heartbeats went unanswered.
   */
  private boolean provenFor(long session) {
    Sessions sessions = backend.sessions();
    return !sessions.bound(session).passed(System.nanoTime() + 2 * sessions.heartbeatNanos(session));
  }

  /**
   * A {@code sync} through the leader, credited to the session that sent it if the handle is still in it
   * when the reply comes ({@link #proven(long, long)}).
   */
  private CompletableFuture<Void> prove(String path, String what) {
    long sent = System.nanoTime();
    long session = backend.handleSession();
    return backend.sync(path, what).thenRun(() -> proven(session, sent));
  }

  /**
   * A request sent at {@code sent} while the handle was in {@code session} has been answered: a proof for
   * that session if the handle is still in it (then the request went out and came back in it), never for
   * the ephemeral owner of a node the reply mentions, which may be another session.
   */
  private void proven(long session, long sent) {
    if (session != 0 && backend.handleSession() == session) {
      backend.sessions().proof(session, sent);
    }
  }

  // ------------------------------------------------------------------ release, renew, waiters

  @Override
  public CompletionStage<Integer> release(String name, String owner, boolean all) {
    String what = what("release", name);
    try {
      backend.ensureOpen(what);
      Hold h = backend.hold(new Hold.Key(side, name, owner));
      if (h == null) {
        return releaseUnknown(name, owner, what);
      }
      String path;
      boolean held;
      boolean uncertain;
      synchronized (h) {
        held = h.granted && !h.lost;
        path = h.path;
        uncertain = h.uncertain;
        if (!all && held && h.holds > 1) {
          h.holds--;
          int left = h.holds;
          return stat(path, what).thenApply(s -> s != null && s.getEphemeralOwner() == h.session ? left : -1);
        }
      }
      backend.forget(h);
      boolean lost;
      synchronized (h) {
        lost = h.lost;
      }
      if (lost) { // declared lost here, and its node deleted then (if the server still had it)
        return CompletableFuture.completedFuture(-1);
      }
      if (path == null) { // a create may have gone unanswered: its node carries the owner's prefix
        return uncertain ? releaseUnknown(name, owner, what) : CompletableFuture.completedFuture(-1);
      }
      if (side == Side.WRITE && held) {
        long token;
        synchronized (h) {
          token = h.czxid;
        }
        return endWritePhase(h.parent, path, token, what).thenApply(deleted -> deleted ? 0 : -1);
      }
      return backend.zk().call(what, cb -> backend.curator().delete().guaranteed().inBackground(cb).forPath(path),
          Code.NONODE).thenApply(e -> Zk.code(e) == Code.OK && held ? 0 : -1);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(Zk.translate(what, e));
    }
  }

  /**
   * A release for an owner this client has no record of: a grant that arrived after its caller gave up,
   * or a create whose reply was lost. Deletes whatever node carries the owner's prefix.
   */
  private CompletableFuture<Integer> releaseUnknown(String name, String owner, String what) {
    String parent = backend.parent(side, name);
    String ownerKey = NodeNames.ownerKey(owner);
    return backend.zk().call(what, cb -> backend.curator().getChildren().inBackground(cb).forPath(parent), Code.NONODE)
        .thenCompose(e -> {
          if (Zk.code(e) == Code.NONODE) {
            return CompletableFuture.completedFuture(-1);
          }
          List<CompletableFuture<CuratorEvent>> deletes = new ArrayList<>();
          for (NodeNames.Node n : NodeNames.queue(e.getChildren())) {
            boolean tagged = n.tag() == side.tag || (side == Side.READ && n.tag() == Side.DOWNGRADE);
            if (tagged && n.ownerKey().equals(ownerKey) && n.clientId().equals(backend.clientId())) {
              deletes.add(backend.zk().call(what, cb -> backend.curator().delete().guaranteed().inBackground(cb)
                  .forPath(parent + "/" + n.name()), Code.NONODE));
            }
          }
          return CompletableFuture.allOf(deletes.toArray(new CompletableFuture<?>[0]))
              .thenApply(v -> deletes.isEmpty() ? -1 : 0);
        });
  }

  @Override
  public CompletionStage<List<Boolean>> renew(List<RenewRequest> requests) {
    String what = side == Side.PERMIT ? "renew permits" : "renew leases";
    try {
      backend.ensureOpen(what);
      long started = System.nanoTime();
      boolean connected = backend.isConnected();
      List<CompletableFuture<Boolean>> answers = new ArrayList<>(requests.size());
      for (RenewRequest r : requests) {
        Hold h = backend.hold(new Hold.Key(side, r.name(), r.owner()));
        String path;
        synchronized (h != null ? h : this) {
          path = h == null || !h.granted || h.lost || h.gone ? null : h.path;
        }
        if (path == null) {
          answers.add(CompletableFuture.completedFuture(false));
        } else if (!connected) { // suspended: the session may or may not live, nobody can tell yet
          answers.add(CompletableFuture.completedFuture(null));
        } else {
          answers.add(stat(path, what).handle((stat, failure) -> {
            if (failure != null) {
              return null;
            }
            synchronized (h) {
              if (stat == null || stat.getEphemeralOwner() != h.session || h.lost) {
                if (!h.lost) {
                  backend.lost(h, "its node is gone (deleted by an operator, or its session expired)");
                }
                return false;
              }
              backend.extend(h, started, r.leaseMillis());
              return true;
            }
          }));
        }
      }
      return CompletableFuture.allOf(answers.toArray(new CompletableFuture<?>[0])).thenApply(v -> {
        List<Boolean> out = new ArrayList<>(answers.size());
        answers.forEach(a -> out.add(a.join()));
        return out;
      });
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(Zk.translate(what, e));
    }
  }

  @Override
  public void cancelWait(String name, String waiterId) {
    backend.cancelWaiter(waiterId);
  }

  /** The woken waiter is gone: its node leaves the queue, which wakes the node behind it. */
  @Override
  public void passWakeup(String name, String goneWaiterId) {
    backend.cancelWaiter(goneWaiterId);
  }

  // ------------------------------------------------------------------ operators

  /** A lock parent's nodes with each one's stat (and data, for the holders). */
  private CompletableFuture<List<NodeNames.Node>> queue(String parent, String what) {
    return backend.zk().call(what, cb -> backend.curator().getChildren().inBackground(cb).forPath(parent), Code.NONODE)
        .thenApply(e -> Zk.code(e) == Code.NONODE ? List.of() : NodeNames.queue(e.getChildren()));
  }

  /** A read-write lock's phase boundary, read after the listing; 0 for the other kinds. */
  private CompletableFuture<Long> boundary(String parent, String what) {
    return side == Side.READ || side == Side.WRITE ? rwRecord(parent, what).thenApply(RwRecord::boundary)
        : CompletableFuture.completedFuture(0L);
  }

  /** The holders of this side, in rule order (permits: the nodes marked as holding). */
  private CompletableFuture<List<NodeNames.Node>> holders(String parent, List<NodeNames.Node> queue, long boundary,
      String what) {
    if (side != Side.PERMIT) {
      List<NodeNames.Node> out = new ArrayList<>();
      for (int i = 0; i < queue.size(); i++) {
        if (side.holds(queue, i, boundary, false)) {
          out.add(queue.get(i));
        }
      }
      return CompletableFuture.completedFuture(out);
    }
    List<CompletableFuture<Stat>> stats = new ArrayList<>();
    for (NodeNames.Node n : queue) {
      stats.add(backend.zk().call(what, cb -> backend.curator().checkExists().inBackground(cb)
          .forPath(parent + "/" + n.name()), Code.NONODE).thenApply(CuratorEvent::getStat));
    }
    return CompletableFuture.allOf(stats.toArray(new CompletableFuture<?>[0])).thenApply(v -> {
      List<NodeNames.Node> out = new ArrayList<>();
      for (int i = 0; i < queue.size(); i++) {
        Stat s = stats.get(i).join();
        if (s != null && s.getVersion() > 0) {
          out.add(queue.get(i));
        }
      }
      return out;
    });
  }

  @Override
  public CompletionStage<Optional<LockInfo>> inspect(String name) {
    String what = what("inspect", name);
    try {
      backend.ensureOpen(what);
      String parent = backend.parent(side, name);
      return backend.sync(parent, what).thenCompose(v -> queue(parent, what)).thenCompose(queue -> {
        if (queue.isEmpty()) {
          return CompletableFuture.completedFuture(Optional.<LockInfo>empty());
        }
        return boundary(parent, what).thenCompose(b -> holders(parent, queue, b, what)).thenCompose(holders -> {
          if (holders.isEmpty()) {
            return CompletableFuture.completedFuture(Optional.<LockInfo>empty());
          }
          NodeNames.Node first = holders.get(0);
          int waiters = queue.size() - holders.size();
          int holdCount = side == Side.READ ? holders.size() : 1;
          CompletableFuture<Long> token = side == Side.READ ? recordedWriteToken(parent, what) : null;
          return backend.zk().call(what, cb -> backend.curator().getData().inBackground(cb)
              .forPath(parent + "/" + first.name()), Code.NONODE).thenCompose(e -> {
                if (Zk.code(e) == Code.NONODE) { // released meanwhile: look again
                  return inspect(name).toCompletableFuture();
                }
                NodeData data = NodeData.parse(e.getData());
                Stat stat = e.getStat();
                CompletableFuture<Long> t = token != null ? token : CompletableFuture.completedFuture(stat.getCzxid());
                return t.thenApply(tok -> Optional.of(new LockInfo(name, data.owner(), holdCount, tok,
                    data.remaining(stat.getCtime(), System.currentTimeMillis()), waiters)));
              });
        });
      });
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(Zk.translate(what, e));
    }
  }

  @Override
  public CompletionStage<Boolean> forceUnlock(String name) {
    String what = what("force-unlock", name);
    try {
      backend.ensureOpen(what);
      String parent = backend.parent(side, name);
      return backend.sync(parent, what).thenCompose(v -> queue(parent, what)).thenCompose(queue -> boundary(parent, what)
          .thenCompose(b -> holders(parent, queue, b, what))).thenCompose(holders -> {
        List<CompletableFuture<Boolean>> deletes = new ArrayList<>();
        for (NodeNames.Node n : holders) {
          String node = parent + "/" + n.name();
          deletes.add(side == Side.WRITE ? endWritePhase(parent, node, -1, what) // the waiting readers enter next
              : backend.zk().call(what, cb -> backend.curator().delete().inBackground(cb).forPath(node), Code.NONODE)
                  .thenApply(e -> Zk.code(e) == Code.OK));
        }
        return CompletableFuture.allOf(deletes.toArray(new CompletableFuture<?>[0]))
            .thenApply(v -> deletes.stream().anyMatch(CompletableFuture::join));
      });
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(Zk.translate(what, e));
    }
  }

  @Override
  public CompletionStage<SemaphoreInfo> describe(String name) {
    String what = "describe semaphore '" + name + "'";
    try {
      backend.ensureOpen(what);
      String parent = backend.parent(side, name);
      return storedPermits(parent, what).thenCompose(stored -> {
            int permits = stored > 0 ? stored : declaredPermits;
            return queue(parent, what).thenCompose(queue -> holders(parent, queue, 0, what)
                .thenApply(holders -> new SemaphoreInfo(name, permits, holders.size(), queue.size() - holders.size())));
          });
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(Zk.translate(what, e));
    }
  }

  /** After a sync, the permit count stored on the semaphore's parent node: 0 if none is (or no parent). */
  private CompletableFuture<Integer> storedPermits(String parent, String what) {
    return backend.sync(parent, what).thenCompose(v -> backend.zk().call(what, cb -> backend.curator().getData()
        .inBackground(cb).forPath(parent), Code.NONODE))
        .thenApply(e -> Zk.code(e) == Code.NONODE ? 0 : parsePermits(e.getData()));
  }

  /**
   * The parent's stored count (none if the parent or its data is missing), then each permit holder's node
   * data: owner and lease, with the node's creation zxid as its token, as {@link #inspect} reads them.
   */
  @Override
  public CompletionStage<SemaphoreState> state(String name) {
    String what = "inspect semaphore '" + name + "'";
    try {
      backend.ensureOpen(what);
      String parent = backend.parent(side, name);
      return storedPermits(parent, what).thenCompose(stored -> {
            OptionalInt permits = stored > 0 ? OptionalInt.of(stored) : OptionalInt.empty();
            return queue(parent, what).thenCompose(queue -> holders(parent, queue, 0, what).thenCompose(holders -> {
              List<CompletableFuture<PermitHolder>> reads = new ArrayList<>();
              for (NodeNames.Node n : holders) {
                reads.add(backend.zk().call(what, cb -> backend.curator().getData().inBackground(cb)
                    .forPath(parent + "/" + n.name()), Code.NONODE).thenApply(d -> {
                      if (Zk.code(d) == Code.NONODE) {
                        return null; // released since the listing
                      }
                      NodeData data = NodeData.parse(d.getData());
                      return new PermitHolder(data.owner(), d.getStat().getCzxid(),
                          data.remaining(d.getStat().getCtime(), System.currentTimeMillis()));
                    }));
              }
              return CompletableFuture.allOf(reads.toArray(new CompletableFuture<?>[0])).thenApply(x -> {
                List<PermitHolder> out = new ArrayList<>();
                reads.forEach(r -> {
                  if (r.join() != null) {
                    out.add(r.join());
                  }
                });
                return new SemaphoreState(name, permits, out, queue.size() - holders.size());
              });
            }));
          });
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(Zk.translate(what, e));
    }
  }

  @Override
  public CompletionStage<Void> setPermits(String name, int permits) {
    String what = "set the permits of semaphore '" + name + "'";
    try {
      backend.ensureOpen(what);
      String parent = backend.parent(side, name);
      byte[] count = Integer.toString(permits).getBytes(StandardCharsets.US_ASCII);
      return backend.zk().call(what, cb -> backend.curator().setData().inBackground(cb).forPath(parent, count),
          Code.NONODE).thenCompose(e -> {
            if (Zk.code(e) == Code.OK) {
              return CompletableFuture.completedFuture((Void) null);
            }
            return backend.zk().call(what, cb -> backend.curator().create().creatingParentsIfNeeded().withACL(backend.nodeAcl(), true).inBackground(cb)
                .forPath(parent, count), Code.NODEEXISTS).thenCompose(c -> Zk.code(c) == Code.OK
                    ? CompletableFuture.completedFuture((Void) null) : setPermits(name, permits).toCompletableFuture());
          });
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(Zk.translate(what, e));
    }
  }

  @Override
  public String toString() {
    return "QueueOps[" + side + "]";
  }
}
