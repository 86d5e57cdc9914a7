package io.locksmith.zookeeper;

import io.locksmith.BackendConfigurationException;
import io.locksmith.BackendUnavailableException;
import io.locksmith.Capabilities;
import io.locksmith.FencingGuarantee;
import io.locksmith.LockInfo;
import io.locksmith.LockKind;
import io.locksmith.spi.AcquireMode;
import io.locksmith.spi.AcquireReply;
import io.locksmith.spi.BackendContext;
import io.locksmith.spi.LockBackend;
import io.locksmith.spi.LockOps;
import io.locksmith.spi.Primitive;
import io.locksmith.spi.RenewRequest;
import io.locksmith.spi.SemaphoreOps;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.WatcherRemoveCuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.ClientInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ZooKeeper backend: one {@link CuratorFramework}, the nodes this client created, and its sessions.
 * See {@link ZooKeeperLockClient} for the behaviour and {@code docs/zookeeper.md} for the layout.
 *
 * <p><b>Node layout.</b> {@code <chroot>/<namespace>/<kind>/<encoded name>/<tag>.<clientId>.<ownerKey>.<seq>}
 * with kinds {@code lock}, {@code fair}, {@code rw} and {@code semaphore}. The kind directories are
 * persistent and created at start. Lock parents are container nodes (the server deletes them once
 * empty), except a semaphore's, which is persistent because it stores the permit count.
 *
 * <p><b>Leases.</b> A node lives as long as its owner's session unless deleted: by its owner's release,
 * by an operator, or by this backend when the lease the core asked for runs out without a renewal (a
 * fixed lease ends so). A renewal checks that the node is still there in a session still this client's;
 * the core learns a loss from it. Between the core's calls the backend tracks what it can prove about
 * its session ({@link Sessions}) and declares every lease of a session lost at the earliest moment the
 * server could have expired it, deleting its node in case the session lives on.
 *
 * <p>Thread-safe. Its own threads: one timer (operation deadlines, lease expiry, heartbeats, the loss
 * check); Curator's and ZooKeeper's threads belong to the {@code CuratorFramework}.
 */
final class ZooKeeperBackend implements LockBackend {
  private static final Logger log = LoggerFactory.getLogger(ZooKeeperBackend.class);
  static final Set<LockKind> KINDS = EnumSet.of(LockKind.EXCLUSIVE, LockKind.FAIR, LockKind.READ_WRITE, LockKind.SEMAPHORE);

  /** How the backend was configured by the client's builder. */
  record Settings(CuratorFramework curator, boolean ownsCurator, String chroot, Duration sessionTimeout,
      Duration connectionTimeout, Duration waiterRecheck, Function<Duration, Duration> drift, String description,
      List<ACL> acl, Duration serverTick) {}

  private final Settings settings;
  private final Capabilities capabilities;
  private final ScheduledThreadPoolExecutor timer;
  private final Zk zk;
  private final Sessions sessions;
  private final ConcurrentMap<Hold.Key, Hold> holds = new ConcurrentHashMap<>();
  private final ConcurrentMap<String, Hold> waiters = new ConcurrentHashMap<>();
  /** Parents where a create of this client went unanswered: swept for its nodes at close. */
  private final Set<String> uncertainParents = ConcurrentHashMap.newKeySet();
  private final ConnectionStateListener listener = this::onConnectionState;
  private volatile WatcherRemoveCuratorFramework curator;
  private volatile BackendContext context;
  private volatile String base;
  private volatile LeaseEvents events = new LoggingLeaseEvents();
  private volatile QueueOps exclusive;
  private ScheduledFuture<?> heartbeat; // guarded by this
  private long heartbeatAt; // guarded by this
  /** The ACL of every node this client creates, or null for the framework's own ACL provider. */
  private volatile List<ACL> nodeAcl;
  private ScheduledFuture<?> lossCheck; // guarded by this
  private long lossCheckAt; // guarded by this
  private volatile boolean closed;
  /** Watch notifications that reached a waiting hold: how many waiters the server woke. */
  private final java.util.concurrent.atomic.AtomicLong wakeups = new java.util.concurrent.atomic.AtomicLong();
  private final java.util.concurrent.atomic.AtomicLong uncertainCreates = new java.util.concurrent.atomic.AtomicLong();
  /** Heartbeats run so far (for tests). */
  private final java.util.concurrent.atomic.AtomicLong heartbeats = new java.util.concurrent.atomic.AtomicLong();

  ZooKeeperBackend(Settings settings) {
    this.settings = settings;
    this.capabilities = new Capabilities("zookeeper", KINDS, FencingGuarantee.STRICT, true);
    this.timer = new ScheduledThreadPoolExecutor(1, r -> {
      BackendContext c = context;
      Thread t = new Thread(r, "locksmith-zk-timer-" + (c != null ? c.clientId() : "starting"));
      t.setDaemon(true);
      return t;
    });
    this.timer.setRemoveOnCancelPolicy(true);
    this.zk = new Zk(timer, settings.connectionTimeout());
    this.sessions = new Sessions(settings.sessionTimeout(), settings.drift(), settings.serverTick());
  }

  // ------------------------------------------------------------------ lifecycle

  @Override
  public void open(BackendContext context) {
    this.context = context;
    this.events = LeaseEvents.both(new LoggingLeaseEvents(), LeaseEvents.to(context.events()));
    this.base = settings.chroot() + "/" + context.namespace();
    this.exclusive = new QueueOps(this, Side.EXCLUSIVE, 0);
    CuratorFramework client = settings.curator();
    try {
      if (settings.ownsCurator()) {
        client.start();
      }
      client.getConnectionStateListenable().addListener(listener);
      if (!client.blockUntilConnected((int) settings.connectionTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
        throw new BackendUnavailableException("no ZooKeeper server of " + settings.description()
            + " answered within the connection timeout of " + settings.connectionTimeout().toMillis() + " ms");
      }
      this.curator = client.newWatcherRemoveCuratorFramework();
      learnSession();
      this.nodeAcl = settings.acl() != null ? settings.acl() : authenticated() ? ZooDefs.Ids.CREATOR_ALL_ACL : null;
      prepare();
      // the first proof at once; then every sixth of the timeout negotiated by then (not the one asked
      // for, nor the 0 an application's framework reports before it connects)
      scheduleHeartbeat(0);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BackendUnavailableException("interrupted while connecting to " + settings.description(), e);
    } catch (RuntimeException e) {
      RuntimeException reported = e instanceof BackendUnavailableException && authenticationFailed()
          ? authenticationRefused(e) : e;
      close();
      throw reported;
    }
  }

  /**
   * Whether the server refused the session's SASL authentication: ZooKeeper's client then stays connected
   * but answers nothing, which would otherwise look like an ensemble that does not answer.
   */
  private boolean authenticationFailed() {
    try {
      return settings.curator().getZookeeperClient().getZooKeeper().getState() == ZooKeeper.States.AUTH_FAILED;
    } catch (Exception e) {
      return false;
    }
  }

  private BackendConfigurationException authenticationRefused(Exception cause) {
    return new BackendConfigurationException("could not connect to " + settings.description()
        + ": the server refused this client's SASL authentication (wrong credentials in its JAAS login section,"
        + " or a server without that mechanism)", cause);
  }

  /**
   * Whether the server knows this session by an identity other than its address: digest or SASL
   * credentials, or a TLS client certificate (ZooKeeper's {@code x509} scheme). Such a client's nodes are
   * made {@code CREATOR_ALL}: readable and writable by that identity alone, so that no other client can
   * delete a holder's node and be granted its lock. Asked of the server ({@code whoAmI}), since an
   * application's {@code CuratorFramework} does not tell its credentials.
   */
  private boolean authenticated() {
    String what = "ask " + settings.description() + " which identities this session has";
    List<ClientInfo> identities;
    try {
      ZooKeeper handle = settings.curator().getZookeeperClient().getZooKeeper();
      // whoAmI has no asynchronous form: bounded here by the connection timeout
      identities = CompletableFuture.supplyAsync(() -> {
        try {
          return handle.whoAmI();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new java.util.concurrent.CompletionException(e);
        }
      }, timer).get(settings.connectionTimeout().toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BackendUnavailableException("interrupted while asking " + settings.description() + " who this is", e);
    } catch (java.util.concurrent.TimeoutException e) {
      throw new BackendUnavailableException(what + ": no answer within the connection timeout of "
          + settings.connectionTimeout().toMillis() + " ms", e);
    } catch (Exception e) {
      throw Zk.translate(what, e);
    }
    if (identities == null && authenticationFailed()) {
      throw authenticationRefused(null);
    }
    if (identities == null) {
      // no answer to tell (the server failed the request: an authentication that failed, or a server
      // before 3.7): the framework's own ACLs apply, and prepare() reports what the server refuses
      return false;
    }
    for (ClientInfo identity : identities) {
      String scheme = identity.getAuthScheme();
      if (scheme != null && !scheme.equals("ip") && !scheme.equals("world")) {
        return true;
      }
    }
    return false;
  }

  /** @return the ACL for the nodes this client creates, or null for the framework's ACL provider */
  List<ACL> nodeAcl() {
    return nodeAcl;
  }

  /**
   * Creates the kind directories and proves that this client may create and delete nodes there, so that
   * credentials or ACLs that do not fit fail the client's creation, not its first acquisition.
   */
  private void prepare() {
    String what = "prepare the lock directories under " + base + " on " + settings.description();
    List<CompletableFuture<?>> dirs = new ArrayList<>();
    for (String dir : List.of("lock", "fair", "rw", "semaphore")) {
      dirs.add(zk.call(what, cb -> curator.create().creatingParentsIfNeeded().withACL(nodeAcl, true).inBackground(cb)
          .forPath(base + "/" + dir, new byte[0]), Code.NODEEXISTS));
    }
    join(CompletableFuture.allOf(dirs.toArray(new CompletableFuture<?>[0])), what);
    String probe = base + "/lock/probe." + context.clientId();
    join(zk.call(what, cb -> curator.create().withMode(CreateMode.EPHEMERAL).withACL(nodeAcl).inBackground(cb)
        .forPath(probe, new byte[0]), Code.NODEEXISTS)
        .thenCompose(e -> zk.call(what, cb -> curator.delete().inBackground(cb).forPath(probe), Code.NONODE)), what);
  }

  private static void join(CompletableFuture<?> f, String what) {
    try {
      f.join();
    } catch (java.util.concurrent.CompletionException e) {
      throw Zk.translate(what, e);
    }
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    synchronized (this) {
      if (heartbeat != null) {
        heartbeat.cancel(false);
      }
    }
    CuratorFramework client = settings.curator();
    WatcherRemoveCuratorFramework c = curator;
    try {
      if (c != null && !settings.ownsCurator()) {
        cleanUp(c);
      }
      if (c != null) {
        c.removeWatchers();
      }
      client.getConnectionStateListenable().removeListener(listener);
    } catch (RuntimeException e) {
      log.debug("while closing: {}", e.toString());
    }
    for (Hold hold : new ArrayList<>(holds.values())) {
      forget(hold);
    }
    if (settings.ownsCurator()) {
      client.close(); // ends the session: the server deletes its nodes at once
    }
    timer.shutdownNow();
    try {
      timer.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * For an application's {@code CuratorFramework}, whose session outlives this client: deletes every
   * node this client still has, including any whose create went unanswered.
   */
  private void cleanUp(WatcherRemoveCuratorFramework c) {
    List<CompletableFuture<?>> deletes = new ArrayList<>();
    String what = "delete this client's nodes at close";
    for (Hold hold : holds.values()) {
      String path;
      synchronized (hold) {
        path = hold.path;
        if (hold.uncertain) {
          uncertainParents.add(hold.parent);
        }
      }
      if (path != null) {
        deletes.add(zk.call(what, cb -> c.delete().guaranteed().inBackground(cb).forPath(path), Code.NONODE));
      }
    }
    String mine = "." + context.clientId() + ".";
    for (String parent : uncertainParents) {
      deletes.add(zk.call(what, cb -> c.getChildren().inBackground(cb).forPath(parent), Code.NONODE).thenCompose(e -> {
        List<CompletableFuture<?>> more = new ArrayList<>();
        if (e.getChildren() != null) {
          for (String child : e.getChildren()) {
            if (child.contains(mine)) {
              more.add(zk.call(what, cb -> c.delete().inBackground(cb).forPath(parent + "/" + child), Code.NONODE));
            }
          }
        }
        return CompletableFuture.allOf(more.toArray(new CompletableFuture<?>[0]));
      }));
    }
    try {
      CompletableFuture.allOf(deletes.toArray(new CompletableFuture<?>[0]))
          .get(settings.connectionTimeout().toMillis(), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      log.debug("could not delete every node at close: {}", e.toString());
    }
  }

  void ensureOpen(String what) {
    if (closed) {
      throw new IllegalStateException(what + ": the client is closed");
    }
  }

  // ------------------------------------------------------------------ SPI

  @Override
  public Capabilities capabilities() {
    return capabilities;
  }

  @Override
  public LockOps ops(Primitive primitive) {
    switch (primitive) {
      case EXCLUSIVE:
        return this;
      case FAIR:
        return new QueueOps(this, Side.FAIR, 0);
      case READ:
        return new QueueOps(this, Side.READ, 0);
      case WRITE:
        return new QueueOps(this, Side.WRITE, 0);
      default:
        throw new AssertionError(primitive);
    }
  }

  @Override
  public SemaphoreOps semaphoreOps(int declaredPermits) {
    return new QueueOps(this, Side.PERMIT, declaredPermits);
  }

  @Override
  public CompletionStage<AcquireReply> acquire(String name, String owner, long leaseMillis, AcquireMode mode,
      String waiterId) {
    return exclusive.acquire(name, owner, leaseMillis, mode, waiterId);
  }

  @Override
  public CompletionStage<Integer> release(String name, String owner, boolean all) {
    return exclusive.release(name, owner, all);
  }

  @Override
  public CompletionStage<List<Boolean>> renew(List<RenewRequest> requests) {
    return exclusive.renew(requests);
  }

  @Override
  public void cancelWait(String name, String waiterId) {
    exclusive.cancelWait(name, waiterId);
  }

  @Override
  public void passWakeup(String name, String goneWaiterId) {
    exclusive.passWakeup(name, goneWaiterId);
  }

  @Override
  public CompletionStage<Optional<LockInfo>> inspect(String name) {
    return exclusive.inspect(name);
  }

  @Override
  public CompletionStage<Boolean> forceUnlock(String name) {
    return exclusive.forceUnlock(name);
  }

  // ------------------------------------------------------------------ for QueueOps

  Zk zk() {
    return zk;
  }

  WatcherRemoveCuratorFramework curator() {
    return curator;
  }

  Sessions sessions() {
    return sessions;
  }

  String clientId() {
    return context.clientId();
  }

  long recheckMillis() {
    return settings.waiterRecheck().toMillis();
  }

  boolean isConnected() {
    return settings.curator().getZookeeperClient().isConnected();
  }

  /** The directory of {@code side}'s lock parents. */
  String kindDirectory(Side side) {
    return base + "/" + side.dir;
  }

  /** The lock parent of {@code name} for {@code side}. */
  String parent(Side side, String name) {
    return base + "/" + side.dir + "/" + NodeNames.encode(name);
  }

  byte[] nodeData(String owner, long leaseMillis, boolean held) {
    return new NodeData(owner, leaseMillis, sessions.timeout(sessions.current()).toMillis()).encode(held);
  }

  Hold hold(Hold.Key key) {
    return holds.get(key);
  }

  /** The hold of {@code key}, created if there is none. */
  Hold holdFor(Hold.Key key) {
    return holds.computeIfAbsent(key, k -> {
      String ownerKey = NodeNames.ownerKey(k.owner());
      Hold[] self = new Hold[1];
      Watcher watcher = event -> onWatch(self[0], event);
      Hold h = new Hold(k, parent(k.side(), k.name()), NodeNames.prefix(tag(k), context.clientId(), ownerKey),
          ownerKey, watcher);
      self[0] = h;
      return h;
    });
  }

  /** A read by the owner of a held write lock of the same name is its downgrade. */
  private char tag(Hold.Key key) {
    if (key.side() == Side.READ) {
      Hold write = holds.get(new Hold.Key(Side.WRITE, key.name(), key.owner()));
      if (write != null) {
        synchronized (write) {
          if (write.granted && !write.lost) {
            return Side.DOWNGRADE;
          }
        }
      }
    }
    return key.side().tag;
  }

  void setWaiter(Hold h, String waiterId) {
    if (waiterId == null) {
      return;
    }
    synchronized (h) {
      if (!h.gone && !waiterId.equals(h.waiterId)) {
        h.waiterId = waiterId;
        waiters.put(waiterId, h);
      }
    }
  }

  /** Forgets a hold: nothing of it is used again, and a reply still on its way cleans up after itself. */
  void forget(Hold h) {
    String waiterId;
    boolean uncertain;
    synchronized (h) {
      h.gone = true;
      if (h.expiry != null) {
        h.expiry.cancel(false);
        h.expiry = null;
      }
      waiterId = h.waiterId;
      uncertain = h.uncertain && h.path == null;
    }
    holds.remove(h.key, h);
    if (waiterId != null) {
      waiters.remove(waiterId, h);
    }
    if (uncertain) {
      uncertainParents.add(h.parent);
    }
  }

  /** A waiter gives up (timeout, interrupt, cancel, close): its node leaves the queue. */
  CompletableFuture<Void> giveUp(Hold h) {
    String path;
    boolean uncertain;
    synchronized (h) {
      if (h.granted) {
        return CompletableFuture.completedFuture(null); // released by the core, not here
      }
      path = h.path;
      uncertain = h.uncertain;
    }
    forget(h);
    String what = "leave the queue of '" + h.name() + "'";
    if (path != null) {
      return zk.call(what, cb -> curator.delete().guaranteed().inBackground(cb).forPath(path), Code.NONODE)
          .handle((e, f) -> null);
    }
    if (uncertain) {
      return exclusiveLike(h).release(h.name(), h.key.owner(), true).toCompletableFuture().handle((e, f) -> null);
    }
    return CompletableFuture.completedFuture(null);
  }

  private QueueOps exclusiveLike(Hold h) {
    return h.side() == Side.EXCLUSIVE ? exclusive : new QueueOps(this, h.side(), 0);
  }

  void cancelWaiter(String waiterId) {
    Hold h = waiters.remove(waiterId);
    if (h != null) {
      giveUp(h);
    }
  }

  /** Deletes a node of this client's, retrying in the background until the session ends; never throws. */
  void deleteQuietly(String path) {
    if (closed && settings.ownsCurator()) {
      return;
    }
    try {
      curator.delete().guaranteed().inBackground((c, e) -> { }).forPath(path);
    } catch (Exception e) {
      log.debug("could not delete {}: {}", path, e.toString());
    }
  }

  /**
   * The grant of {@code h} stands: from now on its lease runs.
   *
   * @return false if the hold was given up meanwhile (the caller reports the grant all the same: the
   *     core gives back a grant that nobody takes)
   */
  boolean granted(Hold h, long started, long leaseMillis) {
    String waiterId;
    synchronized (h) {
      if (h.gone) {
        return false;
      }
      h.granted = true;
      h.lost = false;
      h.holds = 1;
      h.expiresAt = 0;
      extend(h, started, leaseMillis);
      waiterId = h.waiterId;
      h.waiterId = null;
    }
    if (waiterId != null) {
      waiters.remove(waiterId, h);
    }
    armLossCheck(h);
    try {
      timer.schedule(() -> watchHeld(h), HELD_WATCH_DELAY.toNanos(), TimeUnit.NANOSECONDS);
    } catch (java.util.concurrent.RejectedExecutionException closedMeanwhile) {
      // closing: nothing to watch
    }
    return true;
  }

  /**
   * How long after a grant the holder starts watching its node for deletion by others. Most holds are
   * short: watching from the grant on cost every acquire-release cycle one more request and a
   * notification of its own release (4 requests instead of 3, measured). A node deleted meanwhile is
   * found when the watch is set, so an evicted holder is told within this delay plus a round trip.
   */
  static final Duration HELD_WATCH_DELAY = Duration.ofMillis(250);

  /**
   * Watches a held node for its deletion by someone else (an operator's force-unlock, a write phase ended
   * for it), so that the holder is told at once instead of at its next renewal. A node already gone by then
   * is reported the same way.
   */
  private void watchHeld(Hold h) {
    String path;
    synchronized (h) {
      path = h.path;
      if (h.gone || !h.granted || h.lost) {
        return; // released or given up already: nothing to watch
      }
    }
    if (path == null || closed) {
      return;
    }
    try {
      curator.checkExists().usingWatcher(h.watcher).inBackground((c, event) -> {
        if (Code.get(event.getResultCode()) == Code.NONODE) {
          evicted(h, path);
        }
      }).forPath(path);
    } catch (Exception e) {
      log.debug("could not watch {}: {}", path, e.toString());
    }
  }

  /** A held node was deleted, and not by this client's release or expiry. */
  private void evicted(Hold h, String path) {
    synchronized (h) {
      if (h.gone || !h.granted || h.lost || !path.equals(h.path)) {
        return; // released, expired or given up here; or not the node it holds now
      }
    }
    lost(h, "its node was deleted by another client (a force-unlock)");
  }

  /**
   * Guarded by h: the lease runs until {@code started + leaseMillis} at least; when it ends without
   * another renewal the node is deleted.
   */
  void extend(Hold h, long started, long leaseMillis) {
    long until = started + TimeUnit.MILLISECONDS.toNanos(leaseMillis);
    h.leaseMillis = leaseMillis;
    if (h.expiresAt != 0 && until - h.expiresAt <= 0) {
      return;
    }
    h.expiresAt = until;
    if (h.expiry != null) {
      h.expiry.cancel(false);
    }
    try {
      h.expiry = timer.schedule(() -> onExpiry(h), until - System.nanoTime(), TimeUnit.NANOSECONDS);
    } catch (java.util.concurrent.RejectedExecutionException closedMeanwhile) {
      h.expiry = null;
    }
  }

  private void onExpiry(Hold h) {
    String path;
    synchronized (h) {
      if (!h.granted || h.gone || System.nanoTime() - h.expiresAt < 0) {
        return;
      }
      path = h.path;
    }
    lost(h, "its lease of " + h.leaseMillis + " ms ran out without a renewal");
    forget(h);
    if (path != null) {
      deleteHeld(h, path);
    }
  }

  /**
   * Deletes the node of a lease that ended without a release (lease run out, session over); a write
   * lease ends its write phase so that the readers waiting for it enter next.
   */
  private void deleteHeld(Hold h, String path) {
    if (h.side() != Side.WRITE) {
      deleteQuietly(path);
      return;
    }
    long token;
    synchronized (h) {
      token = h.czxid;
    }
    new QueueOps(this, Side.WRITE, 0).endWritePhase(h.parent, path, token, "end the write phase of '" + h.name() + "'")
        .whenComplete((deleted, failure) -> {
          if (failure != null) {
            deleteQuietly(path); // at least free the lock
          }
        });
  }

  /** Marks a held lease lost and reports it; idempotent. */
  void lost(Hold h, String why) {
    synchronized (h) {
      if (h.lost || !h.granted) {
        return;
      }
      h.lost = true;
    }
    events.lost(h.side(), h.name(), h.key.owner(), why);
  }

  // ------------------------------------------------------------------ waiting

  private void onWatch(Hold h, WatchedEvent event) {
    if (event.getType() == Watcher.Event.EventType.None) {
      return; // connection state: the session handling below deals with it
    }
    String own;
    boolean granted;
    synchronized (h) {
      own = h.path;
      granted = h.granted;
    }
    if (own != null && own.equals(event.getPath())) { // the hold's own node
      if (event.getType() == Watcher.Event.EventType.NodeDeleted) {
        if (granted) {
          evicted(h, own);
        } else {
          wakeWaiter(h, false); // a waiter whose node went: it queues again
        }
      } else if (granted) {
        watchHeld(h); // a data change (a permit's mark) used the watch up
      }
      return;
    }
    wakeWaiter(h, true);
  }

  private void wakeWaiter(Hold h) {
    wakeWaiter(h, false);
  }

  private void wakeWaiter(Hold h, boolean byWatch) {
    String waiterId;
    synchronized (h) {
      if (h.gone || h.granted || h.waiterId == null) {
        return;
      }
      waiterId = h.waiterId;
    }
    if (byWatch) {
      wakeups.incrementAndGet();
    }
    if (closed) {
      return;
    }
    if (!context.wakeups().wake(h.name(), waiterId)) {
      cancelWaiter(waiterId); // nobody waits any more: leave the queue, which wakes the next node
    }
  }

  // ------------------------------------------------------------------ sessions and loss

  private void onConnectionState(CuratorFramework client, ConnectionState state) {
    if (closed) {
      return;
    }
    switch (state) {
      case SUSPENDED:
        if (hasGrants()) {
          events.uncertain("the connection to ZooKeeper is suspended");
        }
        break;
      case CONNECTED:
      case RECONNECTED:
        long over = learnSession(); // the server may have negotiated another timeout: re-read at every connection
        if (over != 0) {
          sessionOver(over, "the client reconnected in a new session (the old one expired)");
        } else if (hasGrants()) {
          events.restored("reconnected to ZooKeeper in the same session");
        }
        if (state == ConnectionState.RECONNECTED) {
          sweepUncertain();
        }
        break;
      case LOST:
        // Curator may tell the loss of a session after its handle connected in a new one (the heartbeat
        // may even have learned the new one already): only a session the handle is no longer connected
        // in is over, never the one it is connected in now
        long moved = learnSession();
        if (moved != 0) {
          sessionOver(moved, "the client reconnected in a new session (the old one expired)");
        }
        if (!isConnected()) {
          sessionOver(sessions.current(), "its ZooKeeper session expired or may have (Curator reports the session lost), so the server deletes its node");
        }
        break;
      default:
        break;
    }
  }

  private boolean hasGrants() {
    for (Hold h : holds.values()) {
      synchronized (h) {
        if (h.granted && !h.lost) {
          return true;
        }
      }
    }
    return false;
  }

  /** Reads the handle's session; @return a session that is now over, or 0. */
  private long learnSession() {
    try {
      ZooKeeper handle = settings.curator().getZookeeperClient().getZooKeeper();
      if (handle.getState().isConnected()) {
        return learned(handle.getSessionId(), handle.getSessionTimeout());
      }
    } catch (Exception e) {
      log.debug("could not read the ZooKeeper session: {}", e.toString());
    }
    return 0;
  }

  /**
   * The handle is in session {@code id} with the negotiated timeout (also called by tests, as a
   * reconnection to a server that negotiates another timeout would).
   *
   * @return a session that is now over, or 0
   */
  long learned(long id, int negotiatedTimeoutMillis) {
    Sessions.Learned learned = sessions.learn(id, negotiatedTimeoutMillis);
    if (learned.shorter()) {
      // every bound of the session came earlier: the loss check armed for the old one may be late, and
      // the heartbeat must come more often
      scheduleLossCheck(System.nanoTime());
      scheduleHeartbeat(0);
    }
    return learned.over();
  }

  /**
   * Every lease of session {@code id} is lost; its nodes are deleted in case the server still keeps
   * them; waiters of that session queue again at once.
   */
  private void sessionOver(long id, String why) {
    if (id == 0) {
      return;
    }
    List<Hold> waiting = new ArrayList<>();
    for (Hold h : holds.values()) {
      String path = null;
      boolean grant;
      synchronized (h) {
        if (h.session != id || h.path == null) {
          continue;
        }
        grant = h.granted;
        if (!grant) {
          path = h.path;
          h.path = null;
        }
      }
      if (grant) {
        lostAndDeleted(h, why);
      } else {
        deleteQuietly(path);
        waiting.add(h);
      }
    }
    waiting.forEach(this::wakeWaiter);
  }

  private void lostAndDeleted(Hold h, String why) {
    String path;
    synchronized (h) {
      path = h.path;
    }
    lost(h, why);
    if (path != null) {
      deleteHeld(h, path);
    }
  }

  /**
   * Proves contact with the session through the leader ({@link Sessions}) every sixth of its negotiated
   * timeout, and at least every half tick: a {@code sync}, which the server this client is connected to
   * answers only once the leader has. A read would not do: a follower cut off from its leader answers
   * reads while the leader expires the session. (The client's own pings are invisible, and local too.)
   */
  private void heartbeat() {
    if (closed) {
      return;
    }
    heartbeats.incrementAndGet();
    try {
      long over = learnSession();
      if (over != 0) {
        sessionOver(over, "the client is in a new session (the old one expired)");
      }
      ZooKeeper handle = settings.curator().getZookeeperClient().getZooKeeper();
      long id = handle.getSessionId();
      if (handle.getState().isConnected() && id != 0) {
        long sent = System.nanoTime();
        handle.sync("/", (rc, path, ctx) -> {
          if (rc == Code.OK.intValue()) {
            sessions.proof(id, sent);
          }
        }, null);
      }
    } catch (Exception e) {
      log.debug("heartbeat not sent: {}", e.toString());
    } finally {
      synchronized (this) {
        heartbeat = null;
      }
      scheduleHeartbeat(sessions.heartbeatNanos(sessions.current()));
    }
  }

  /** Makes sure a heartbeat runs within {@code delayNanos}. */
  private synchronized void scheduleHeartbeat(long delayNanos) {
    if (closed) {
      return;
    }
    long at = System.nanoTime() + delayNanos;
    if (heartbeat != null && !heartbeat.isDone()) {
      if (heartbeatAt - at <= 0) {
        return; // one is due earlier anyway
      }
      heartbeat.cancel(false);
    }
    heartbeatAt = at;
    try {
      heartbeat = timer.schedule(this::heartbeat, delayNanos, TimeUnit.NANOSECONDS);
    } catch (java.util.concurrent.RejectedExecutionException closedMeanwhile) {
      heartbeat = null;
    }
  }

  /** Makes sure the loss check runs no later than {@code h}'s session deadline. */
  private void armLossCheck(Hold h) {
    long session;
    synchronized (h) {
      session = h.session;
    }
    Sessions.Bound bound = sessions.bound(session);
    scheduleLossCheck(bound.standing() == Sessions.Standing.PROVEN ? bound.until() : System.nanoTime());
  }

  private synchronized void scheduleLossCheck(long at) {
    if (closed) {
      return;
    }
    if (lossCheck != null && !lossCheck.isDone() && lossCheckAt - at <= 0) {
      return; // an earlier check is due anyway
    }
    if (lossCheck != null) {
      lossCheck.cancel(false);
    }
    lossCheckAt = at;
    try {
      lossCheck = timer.schedule(this::lossCheck, Math.max(0, at - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (java.util.concurrent.RejectedExecutionException closedMeanwhile) {
      lossCheck = null;
    }
  }

  /**
   * Declares lost every held lease whose session the server may have expired by now, and arms the next
   * check at the earliest deadline left.
   */
  private void lossCheck() {
    synchronized (this) {
      lossCheck = null;
    }
    long now = System.nanoTime();
    long next = 0;
    boolean any = false;
    Set<Long> inUse = new HashSet<>();
    for (Hold h : holds.values()) {
      long session;
      synchronized (h) {
        if (!h.granted || h.lost || h.gone) {
          continue;
        }
        session = h.session;
      }
      inUse.add(session);
      Sessions.Bound bound = sessions.bound(session);
      if (bound.passed(now)) {
        lostAndDeleted(h, switch (bound.standing()) {
          case OVER -> "its ZooKeeper session is over";
          case UNPROVEN -> "nothing proves its ZooKeeper session alive (no request of it was answered through the leader)";
          case PROVEN -> "no answer through the ZooKeeper leader for the session timeout of "
              + sessions.timeout(session).toMillis() + " ms less half a tick and the drift and scheduling allowances: the leader may"
              + " have expired the session";
        });
      } else if (!any || bound.until() - next < 0) {
        next = bound.until();
        any = true;
      }
    }
    sessions.prune(inUse);
    if (any) {
      scheduleLossCheck(next);
    }
  }

  // ------------------------------------------------------------------ diagnostics

  /** For tests: reports lease events to {@code observer} as well. */
  void observe(LeaseEvents observer) {
    this.events = LeaseEvents.both(events, observer);
  }

  /**
   * Brings the server this client talks to up to date with the leader before a read that must see other
   * clients' latest writes (an operator's inspect or force-unlock): ZooKeeper's reads are served by the
   * connected server, which may lag. Grants need no sync to see the queue: a client's own create is
   * applied on its server before the reply, and so is everything ordered before it. A grant whose session
   * nothing proves yet is proven by a sync first, for its loss bound ({@code QueueOps}).
   */
  CompletableFuture<Void> sync(String path, String what) {
    return zk.call(what, cb -> curator.sync().inBackground(cb).forPath(path), Code.NONODE).thenApply(e -> null);
  }

  /** A create under {@code parent} went unanswered (its node may exist). */
  void uncertainCreate(String parent) {
    uncertainCreates.incrementAndGet();
    uncertainParents.add(parent);
  }

  /**
   * After a reconnection in the same session: deletes this client's nodes under parents where a create
   * went unanswered that no live hold accounts for. Such a node exists when the server applied a create
   * whose reply was lost and nothing looked for it since (its acquisition ended); left alone, it would
   * block its lock for as long as the session lives.
   */
  private void sweepUncertain() {
    String mine = "." + context.clientId() + ".";
    for (String parent : List.copyOf(uncertainParents)) {
      zk.call("sweep " + parent, cb -> curator.getChildren().inBackground(cb).forPath(parent), Code.NONODE)
          .whenComplete((e, failure) -> {
            if (failure != null) {
              return; // the next reconnection or close tries again
            }
            uncertainParents.remove(parent);
            if (e.getChildren() == null) {
              return;
            }
            Set<String> accounted = new HashSet<>();
            for (Hold h : holds.values()) {
              if (h.parent.equals(parent)) {
                accounted.add(h.prefix);
              }
            }
            for (NodeNames.Node n : NodeNames.queue(e.getChildren())) {
              if (n.name().contains(mine) && !accounted.contains(n.prefix())) {
                log.debug("deleting {}/{}: created by an attempt that got no answer", parent, n.name());
                deleteQuietly(parent + "/" + n.name());
              }
            }
          });
    }
  }

  /** @return creates that went unanswered so far (for tests) */
  long uncertainCreates() {
    return uncertainCreates.get();
  }

  /** @return heartbeats run so far (for tests) */
  long heartbeats() {
    return heartbeats.get();
  }

  /** For tests: a connection state as Curator reports it. */
  void connectionState(ConnectionState state) {
    onConnectionState(settings.curator(), state);
  }

  /** For tests: when the next loss check is due ({@link System#nanoTime()}), or null if none is armed. */
  synchronized Long lossCheckDue() {
    return lossCheck != null && !lossCheck.isDone() ? lossCheckAt : null;
  }

  /** For tests: runs the loss check now, on the timer thread, and waits for it. */
  void checkLossNow() throws Exception {
    timer.submit(this::lossCheck).get(5, TimeUnit.SECONDS);
  }

  /** @return watch notifications that reached a waiting hold so far (for tests and the bench) */
  long wakeups() {
    return wakeups.get();
  }

  /** For tests: the password of the handle's session, to expire it on the server. */
  byte[] sessionPassword() {
    try {
      return settings.curator().getZookeeperClient().getZooKeeper().getSessionPasswd();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * The session the client's handle is in right now, read without waiting, or 0 if it has none (not
   * connected yet, or the handle is being replaced). A request whose send and reply both see the same
   * session was sent and answered in that session: a handle never returns to a session it left.
   */
  long handleSession() {
    try {
      ZooKeeper handle = settings.curator().getZookeeperClient().getZooKeeper();
      return handle.getState().isConnected() ? handle.getSessionId() : 0;
    } catch (Exception e) {
      return 0;
    }
  }

  /** For tests: the session the client is in, as far as it knows. */
  long currentSession() {
    return sessions.current();
  }

  String description() {
    return settings.description();
  }

  /** Logs at DEBUG what the core is told (it logs the state changes itself). */
  private static final class LoggingLeaseEvents implements LeaseEvents {
    @Override
    public void uncertain(String why) {
      log.debug("leases uncertain: {}", why);
    }

    @Override
    public void restored(String why) {
      log.debug("leases held again: {}", why);
    }

    @Override
    public void lost(Side side, String name, String owner, String why) {
      log.debug("lease on {} lock '{}' ({}) is lost: {}", side.name().toLowerCase(java.util.Locale.ROOT), name, owner,
          why);
    }
  }
}
