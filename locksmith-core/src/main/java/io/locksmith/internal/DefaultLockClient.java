package io.locksmith.internal;

import io.locksmith.BackendUnavailableException;
import io.locksmith.Capabilities;
import io.locksmith.ClientOptions;
import io.locksmith.DistributedLock;
import io.locksmith.DistributedReadWriteLock;
import io.locksmith.DistributedSemaphore;
import io.locksmith.LeaseLostException;
import io.locksmith.LeaseState;
import io.locksmith.LockClient;
import io.locksmith.LockInfo;
import io.locksmith.LockKind;
import io.locksmith.LockOptions;
import io.locksmith.SemaphoreState;
import io.locksmith.Ticker;
import io.locksmith.spi.AcquireMode;
import io.locksmith.spi.AcquireReply;
import io.locksmith.spi.BackendContext;
import io.locksmith.spi.HoldKind;
import io.locksmith.spi.LockBackend;
import io.locksmith.spi.HandOffOps;
import io.locksmith.spi.LockOps;
import io.locksmith.spi.Primitive;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link LockClient} every backend module wraps: it owns the client id, the one scheduler thread
 * (renewals and wait timers), the one event thread (listeners), the small pool that completes async
 * results (unless the application gave an executor), the table of waiting acquisitions that wake-ups
 * are routed to, the Lock view's per-thread holds, and the detector of leases nobody will release.
 */
public final class DefaultLockClient implements LockClient {
  private static final Logger log = LoggerFactory.getLogger(DefaultLockClient.class);
  private static final SecureRandom RANDOM = new SecureRandom();
  /** Longest time {@link #close()} waits for releases and replies in flight. */
  static final java.time.Duration CLOSE_WAIT = java.time.Duration.ofSeconds(5);
  /** Threads of the client's own completion pool, at most. */
  static final int COMPLETION_THREADS = 4;
  /** How often the leak detector looks for dropped leases once there have been any to watch. */
  private static final long LEAK_POLL_NANOS = TimeUnit.SECONDS.toNanos(1);

  /** A Lock view hold: one lock (kind and name) held by one thread. */
  record HoldKey(Primitive primitive, String name, Thread thread) {}

  private final LockBackend backend;
  private final ClientOptions options;
  private final String clientId;
  private final ScheduledThreadPoolExecutor scheduler;
  private final ExecutorService events;
  private final Renewer renewer;
  private final ConcurrentMap<String, Acquisition> waiters = new ConcurrentHashMap<>();
  private final ConcurrentMap<HoldKey, DefaultLease> threadHolds = new ConcurrentHashMap<>();
  private final Set<DefaultLease> live = ConcurrentHashMap.newKeySet();
  /** Operations {@link #close()} waits for: rounds it interrupted, releases and give-backs. */
  private final Set<CompletableFuture<?>> inFlight = ConcurrentHashMap.newKeySet();
  private final Set<Acquisition> running = ConcurrentHashMap.newKeySet();
  /**
   * Per lock name, this client's waiting acquisitions of kinds that can be handed over locally
   * ({@link HandOffOps}), in arrival order: a release takes the lock's next local owner from here.
   */
  private final ConcurrentMap<String, java.util.concurrent.ConcurrentLinkedQueue<Acquisition>> localWaiters =
      new ConcurrentHashMap<>();
  /**
   * Live leases of this client on lock kinds that hand over locally, per lock name: while there is one, a
   * new waiting acquisition of the name queues behind it locally instead of asking the backend (it would
   * only be refused), and the lease's release hands the lock to it.
   */
  private final ConcurrentMap<String, Integer> localHolds = new ConcurrentHashMap<>();
  /** The safety net of an acquisition that waits locally only, should both the hand-off and the ask miss. */
  private static final long LOCAL_BACKSTOP_NANOS = TimeUnit.SECONDS.toNanos(1);
  /** {@link #LOCAL_BACKSTOP_NANOS}; tests lengthen it so that only a hand-off or an ask can end such a wait. */
  volatile long localBackstopNanos = LOCAL_BACKSTOP_NANOS;
  /**
   * Test hook: called with an acquisition that is queued locally, behind a lease of this client, just before
   * it starts to wait; null (the default) in use.
   */
  volatile java.util.function.Consumer<Acquisition> beforeLocalStart;
  /**
   * Locks released after a delay ({@link #releaseLeaseAfter}) whose delay is not over: verified when the
   * backend reconnects ({@link #verifyDelayedReleases}), so that one the backend lost (restarted without its
   * data, failed over to a replica that missed it) is reported instead of silently freeing the lock early.
   */
  private final Set<DelayedRelease> delayedReleases = ConcurrentHashMap.newKeySet();

  /** One pending delayed release: the backend hold of {@code owner} should last until {@code endsAtNanos}. */
  private record DelayedRelease(LockOps ops, String name, String owner, long endsAtNanos) {}

  /** Run by {@link #close()} after the leases are released: ends what lives outside them (degraded leases). */
  private final Set<Runnable> closeHooks = ConcurrentHashMap.newKeySet();
  private final AtomicLong sequence = new AtomicLong();
  /** {@code "@" + client name}, or empty: appended to owner ids (not waiter ids, which stay short). */
  private final String ownerSuffix;
  private volatile boolean closed;
  /** The client's own completion pool, or null when the application gave an executor. */
  private final ThreadPoolExecutor ownCompletions;
  /** Where user-facing async results complete; see {@link #completions()}. */
  private final Executor completions;
  private final AtomicBoolean completionRejectionLogged = new AtomicBoolean();
  /** Finds lease-view leases dropped without release, or null when leak detection is off. */
  private final LeakDetector leaks;
  /**
   * Whether acquisitions record their caller's stack ({@link #acquisitionSite()}): from the start with
   * {@link ClientOptions#acquisitionSites()}, else from this client's first leak on ({@link #sitesFromNowOn}).
   */
  private volatile boolean recordSites;
  private final AtomicBoolean leakPolling = new AtomicBoolean();
  /** What the backend reports about the connection and evicted holds, applied to the live leases. */
  private final LeaseSignals signals = new LeaseSignals(this);
  /**
   * The validity margin of the lease time used last, in ns: a client's locks nearly always share one lease
   * time, and {@link ClientOptions#validityMarginFor} builds three {@code Duration}s per call, which every
   * acquisition and every lease needed (racing callers at worst compute it again).
   */
  private volatile Margin lastMargin = new Margin(null, 0);

  private record Margin(java.time.Duration lease, long nanos) {}

  /**
   * Opens {@code backend} for a new client.
   *
   * @param backend the backend, not yet opened; the client owns and closes it
   * @param options the shared client options
   * @throws io.locksmith.BackendUnavailableException if the backend cannot be set up
   */
  public DefaultLockClient(LockBackend backend, ClientOptions options) {
    this.backend = Objects.requireNonNull(backend, "backend");
    this.options = Objects.requireNonNull(options, "options");
    byte[] id = new byte[9];
    RANDOM.nextBytes(id);
    this.clientId = Base64.getUrlEncoder().withoutPadding().encodeToString(id);
    this.ownerSuffix = options.clientName().map(n -> "@" + n).orElse("");
    this.scheduler = new ScheduledThreadPoolExecutor(1, daemon("locksmith-timer-" + clientId));
    this.scheduler.setRemoveOnCancelPolicy(true);
    this.events = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(),
        daemon("locksmith-events-" + clientId));
    this.renewer = new Renewer(this);
    this.ownCompletions = options.completionExecutor().isPresent() ? null : completionPool(clientId);
    Executor target = options.completionExecutor().orElse(ownCompletions);
    this.completions = task -> complete(target, task);
    this.leaks = options.leakDetection() ? new LeakDetector(this::leaseDropped) : null;
    this.recordSites = options.leakDetection() && options.acquisitionSites();
    try {
      backend.open(new BackendContext(clientId, options.namespace(), this::onWake,
          options.clientName().orElse(null), signals));
    } catch (RuntimeException e) {
      shutdownThreads();
      backend.close();
      throw e;
    }
  }

  /**
   * The client's own pool for completing async results: bounded (a thread per completion is what the
   * common pool falls back to with parallelism 1), daemon, named, and empty when idle.
   */
  private static ThreadPoolExecutor completionPool(String clientId) {
    AtomicInteger count = new AtomicInteger();
    ThreadPoolExecutor pool = new ThreadPoolExecutor(COMPLETION_THREADS, COMPLETION_THREADS, 30,
        TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
        r -> daemon("locksmith-async-" + clientId + "-" + count.incrementAndGet()).newThread(r));
    pool.allowCoreThreadTimeOut(true);
    return pool;
  }

  private static ThreadFactory daemon(String name) {
    return r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    };
  }

  // ------------------------------------------------------------------ LockClient

  @Override
  public DistributedLock lock(String name) {
    return lock(name, options.defaultLockOptions());
  }

  @Override
  public DistributedLock lock(String name, LockOptions lockOptions) {
    checkLock(name, lockOptions, LockKind.EXCLUSIVE);
    signals.register(backend, HoldKind.EXCLUSIVE);
    DistributedLock lock = new DefaultDistributedLock(this, backend, Primitive.EXCLUSIVE, name, lockOptions);
    // an efficiency lock that may fall back to a JVM-local lock: the opt-in of issue 17
    return lockOptions.degradation().<DistributedLock>map(p -> new DegradableLock(this, lock, p)).orElse(lock);
  }

  @Override
  public DistributedLock fairLock(String name, LockOptions lockOptions) {
    checkLock(name, lockOptions, LockKind.FAIR);
    LockOps ops = backend.ops(Primitive.FAIR);
    signals.register(ops, HoldKind.FAIR);
    return new DefaultDistributedLock(this, ops, Primitive.FAIR, name, lockOptions);
  }

  @Override
  public DistributedReadWriteLock readWriteLock(String name, LockOptions lockOptions) {
    checkLock(name, lockOptions, LockKind.READ_WRITE);
    DefaultReadWriteLock lock = new DefaultReadWriteLock(this, name, lockOptions, backend);
    signals.register(((AbstractLeaseSource) lock.readLock()).ops, HoldKind.READ);
    signals.register(((AbstractLeaseSource) lock.writeLock()).ops, HoldKind.WRITE);
    return lock;
  }

  @Override
  public DistributedSemaphore semaphore(String name, int permits, LockOptions lockOptions) {
    checkLock(name, lockOptions, LockKind.SEMAPHORE);
    if (permits < 1) {
      throw new IllegalArgumentException("a semaphore needs at least 1 permit, was " + permits);
    }
    io.locksmith.spi.SemaphoreOps ops = backend.semaphoreOps(permits);
    signals.register(ops, HoldKind.PERMIT);
    return new DefaultSemaphore(this, ops, name, permits, lockOptions);
  }

  private void checkLock(String name, LockOptions lockOptions, LockKind kind) {
    LockNames.validate(name, options.maxNameLength());
    Objects.requireNonNull(lockOptions, "options");
    java.time.Duration lease = lockOptions.leaseTime();
    if (marginNanos(lease) >= lease.toNanos()) {
      throw new IllegalArgumentException("lease time " + lease + " is not longer than the part of it the holder "
          + "does not count on: clock-drift allowance " + options.driftFor(lease) + " + schedulingAllowance "
          + options.schedulingAllowance() + " (ClientOptions); use a longer lease or smaller allowances");
    }
    if (!backend.capabilities().supports(kind)) {
      throw new UnsupportedOperationException("the " + backend.capabilities().backend()
          + " backend does not offer " + kind + " locks; see capabilities()");
    }
    ensureOpen();
  }

  @Override
  public Capabilities capabilities() {
    return backend.capabilities();
  }

  @Override
  public ClientOptions options() {
    return options;
  }

  @Override
  public String clientId() {
    return clientId;
  }

  @Override
  public Optional<LockInfo> inspect(String name) {
    LockNames.validate(name, options.maxNameLength());
    ensureOpen();
    return Futures.join(backend.inspect(name));
  }

  @Override
  public SemaphoreState inspectSemaphore(String name) {
    LockNames.validate(name, options.maxNameLength());
    if (!backend.capabilities().supports(LockKind.SEMAPHORE)) {
      throw new UnsupportedOperationException("the " + backend.capabilities().backend()
          + " backend does not offer SEMAPHORE locks; see capabilities()");
    }
    ensureOpen();
    // the declared count of these operations is never used by state(): it declares nothing
    return Futures.join(backend.semaphoreOps(1).state(name));
  }

  @Override
  public boolean forceUnlock(String name) {
    LockNames.validate(name, options.maxNameLength());
    ensureOpen();
    return forceUnlock(backend, name);
  }

  boolean forceUnlock(LockOps ops, String name) {
    boolean deleted = Futures.join(ops.forceUnlock(name));
    if (deleted) {
      log.warn("lock '{}' was force-unlocked by an operator", name);
    }
    return deleted;
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    IllegalStateException closing = new IllegalStateException("lock client " + clientId + " is closed");
    for (Acquisition acquisition : new ArrayList<>(running)) {
      acquisition.result.completeExceptionally(closing);
      track(acquisition.round()); // a grant in this round is given back before the backend closes
    }
    // Release every lease at once, then let replies in flight land (a grant that lands now is given
    // back) before the backend goes: one bounded wait however many leases there are.
    long deadline = System.nanoTime() + CLOSE_WAIT.toNanos();
    for (DefaultLease lease : new ArrayList<>(live)) {
      track(releaseLeaseAsync(lease));
    }
    for (Runnable hook : new ArrayList<>(closeHooks)) {
      try {
        hook.run();
      } catch (RuntimeException e) {
        log.warn("while closing: a close hook threw", e);
      }
    }
    while (!inFlight.isEmpty() && System.nanoTime() < deadline) {
      try {
        CompletableFuture.allOf(inFlight.toArray(new CompletableFuture<?>[0]))
            .get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      } catch (Exception failedOrSlow) {
        log.debug("while closing: {}", failedOrSlow.toString());
      }
    }
    backend.close();
    shutdownThreads();
  }

  private void shutdownThreads() {
    stopCompletions();
    scheduler.shutdownNow();
    events.shutdown();
    try {
      if (!events.awaitTermination(2, TimeUnit.SECONDS)) {
        events.shutdownNow();
      }
      scheduler.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      events.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Lets the completions already queued run (close failed the acquisitions still running, and their
   * callers must hear so), then ends the pool; a completion after this runs on the thread at hand.
   */
  private void stopCompletions() {
    if (ownCompletions == null) {
      return;
    }
    ownCompletions.shutdown();
    if (Thread.currentThread().getName().startsWith("locksmith-async-" + clientId + "-")) {
      return; // closed from a stage on one of these threads: it would wait for itself
    }
    try {
      if (!ownCompletions.awaitTermination(2, TimeUnit.SECONDS)) {
        log.warn("asynchronous callers of lock client {} still run dependent stages 2 s after close; "
            + "their threads end when those stages return", clientId);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public String toString() {
    return "LockClient[" + backend.capabilities().backend() + ", id=" + clientId + "]";
  }

  // ------------------------------------------------------------------ machinery

  void ensureOpen() {
    if (closed) {
      throw new IllegalStateException("lock client " + clientId + " is closed");
    }
  }

  Ticker ticker() {
    return options.ticker();
  }

  Renewer renewer() {
    return renewer;
  }

  /** Has {@code hook} run when the client closes (once, unless removed before). */
  void addCloseHook(Runnable hook) {
    closeHooks.add(hook);
  }

  void removeCloseHook(Runnable hook) {
    closeHooks.remove(hook);
  }

  LeaseSignals signals() {
    return signals;
  }

  /**
   * @return {@link ClientOptions#validityMarginFor}({@code leaseTime}) in ns, cached for the lease time used
   *     last
   */
  long marginNanos(java.time.Duration leaseTime) {
    Margin m = lastMargin;
    if (!leaseTime.equals(m.lease())) {
      m = new Margin(leaseTime, options.validityMarginFor(leaseTime).toNanos());
      lastMargin = m;
    }
    return m.nanos();
  }

  /** @return the leases granted and not yet ended (a live view) */
  Iterable<DefaultLease> liveLeases() {
    return live;
  }

  /** Runs {@code task} on the timer thread, after what is queued there; dropped after close. */
  void runOnTimer(Runnable task) {
    schedule(() -> {
      try {
        task.run();
      } catch (RuntimeException e) {
        log.warn("lock client {}: handling a backend event failed", clientId, e);
      }
    }, 0);
  }

  /** Schedules on the client's timer thread; after close, returns a cancelled future instead. */
  ScheduledFuture<?> schedule(Runnable task, long delayNanos) {
    try {
      return scheduler.schedule(task, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException closedMeanwhile) {
      return new CancelledTimer();
    }
  }

  /** Runs a listener call on the event thread. */
  void fire(Runnable call) {
    Runnable guarded = () -> {
      try {
        call.run();
      } catch (RuntimeException e) {
        log.warn("a lease listener threw; ignored", e);
      }
    };
    try {
      events.execute(guarded);
    } catch (RejectedExecutionException closedMeanwhile) {
      log.debug("client closed; lease event dropped");
    }
  }

  // ------------------------------------------------------------------ async completions

  /**
   * @return the executor user-facing async results complete on: never a backend I/O thread, never the
   *     common pool. A task the target rejects (the client's own pool after close, an application's
   *     executor that was shut down) runs on the calling thread, so that no caller is left waiting.
   */
  Executor completions() {
    return completions;
  }

  private void complete(Executor target, Runnable task) {
    try {
      target.execute(task);
    } catch (RejectedExecutionException rejected) {
      if (ownCompletions == null && completionRejectionLogged.compareAndSet(false, true)) {
        log.warn("the completion executor of lock client {} rejected a task ({}); async results complete on "
            + "the thread at hand instead, which may be a backend I/O thread", clientId, rejected.toString());
      }
      task.run();
    }
  }

  /**
   * {@link io.locksmith.Lease#releaseAsync()}: the release of {@link #releaseLeaseAsync}, completed on the
   * completion executor with the failure unwrapped.
   */
  CompletionStage<Boolean> releaseLeaseForCaller(DefaultLease lease) {
    CompletableFuture<Boolean> out = new CompletableFuture<>();
    CompletableFuture<Boolean> release;
    try {
      release = releaseLeaseAsync(lease);
    } catch (RuntimeException e) {
      release = CompletableFuture.failedFuture(e);
    }
    release.whenCompleteAsync((owned, failure) -> {
      if (failure != null) {
        out.completeExceptionally(Futures.unwrap(failure));
      } else {
        out.complete(owned);
      }
    }, completions);
    return out;
  }

  // ------------------------------------------------------------------ leak detection

  /**
   * @return where the caller is acquiring a lease, to be logged if the lease leaks; null while sites are not
   *     recorded (leak detection off, or no leak found yet and {@link ClientOptions#acquisitionSites()} off).
   *     A {@code Throwable} only turns its frames into text if it is ever printed, but capturing them is the
   *     JVM walking the stack: several µs per acquisition, which is why it waits for a first leak by default.
   */
  Throwable acquisitionSite() {
    return recordSites ? new AcquisitionSite(Thread.currentThread().getName()) : null;
  }

  /**
   * A leak was found: acquisitions record their stacks from now on, so that the next leak from the same
   * code is reported with where it was acquired.
   *
   * @param site the leaked lease's site, or null if it had none
   * @return what the WARN adds about the site when there is none: how to get one
   */
  private String sitesFromNowOn(Throwable site) {
    if (leaks == null) {
      return "";
    }
    recordSites = true;
    return site != null ? "" : " (where it was acquired was not recorded: this client records acquisition stacks "
        + "from its first leak on, so the next one is reported with its stack; ClientOptions.Builder"
        + ".acquisitionSites(true) records them from the start)";
  }

  /** The stack of an acquisition, shown in leak warnings. */
  static final class AcquisitionSite extends Throwable {
    private static final long serialVersionUID = 1L;
    private final long at = System.nanoTime();

    AcquisitionSite(String thread) {
      super("the lease was acquired here, by thread '" + thread + "'", null, false, true);
    }

    /** @return how long ago the acquisition started */
    java.time.Duration age() {
      return java.time.Duration.ofMillis(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - at));
    }

    /** Classes whose frames sit on top of every recorded stack: the caller's frame is what matters. */
    private static final Set<String> OURS = Set.of(DefaultLockClient.class.getName(),
        AbstractLeaseSource.class.getName(), DefaultDistributedLock.class.getName(),
        DefaultReadWriteLock.class.getName(), DefaultSemaphore.class.getName(),
        io.locksmith.LeaseSource.class.getName(), io.locksmith.DistributedLock.class.getName());

    /** @return {@code site} starting at the caller's frame; only called to report, so cost is no matter */
    static Throwable forReport(Throwable site) {
      if (site instanceof AcquisitionSite) {
        StackTraceElement[] frames = site.getStackTrace();
        int first = 0;
        while (first < frames.length - 1 && OURS.contains(frames[first].getClassName())) {
          first++;
        }
        site.setStackTrace(java.util.Arrays.copyOfRange(frames, first, frames.length));
      }
      return site;
    }
  }

  /**
   * Hands a granted lease-view lease to its caller: as a handle the leak detector watches when leak
   * detection is on.
   *
   * @param site from {@link #acquisitionSite()}, taken on the caller's thread when it asked
   */
  io.locksmith.Lease publish(DefaultLease lease, Throwable site) {
    lease.acquiredAt(site);
    if (leaks == null) {
      return lease;
    }
    LeaseHandle handle = new LeaseHandle(lease, leaks, site);
    if (leakPolling.compareAndSet(false, true)) {
      try {
        scheduler.scheduleWithFixedDelay(this::pollLeaks, LEAK_POLL_NANOS, LEAK_POLL_NANOS,
            TimeUnit.NANOSECONDS);
      } catch (RejectedExecutionException closedMeanwhile) {
        log.debug("client closed; no leak detection");
      }
    }
    return handle;
  }

  private void pollLeaks() {
    try {
      leaks.poll();
    } catch (RuntimeException e) {
      log.warn("leak detection failed; it goes on at the next poll", e);
    }
  }

  /** @return how many handed-out lease-view leases the leak detector watches (tests) */
  int watchedForLeaks() {
    return leaks == null ? 0 : leaks.size();
  }

  /** Runs the leak detector now (tests: after forcing a collection). */
  void pollLeaksNow() {
    if (leaks != null) {
      leaks.poll();
    }
  }

  /** The leak detector found a lease-view lease dropped by its holder; runs on the timer thread. */
  private void leaseDropped(DefaultLease lease, Throwable site) {
    LeaseState state = lease.state();
    if (state.isFinal() || closed) {
      return; // ended by itself (lost, released by close()): nothing held, nothing to report
    }
    String age = site instanceof AcquisitionSite a ? ", " + a.age().toMillis() + " ms after it was acquired"
        : "";
    log.warn("a lease on lock '{}' (token {}, {}) became unreachable without release() or close(){}; it is "
        + "released now. Release every lease in a finally block or with try-with-resources{}", lease.lockName(),
        lease.fencingToken(), state, age, sitesFromNowOn(site), AcquisitionSite.forReport(site));
    giveBack(lease);
  }

  /**
   * A Lock-view hold due for renewal belongs to a thread that has ended, so no thread can unlock it.
   * Releasing it is what the thread's {@code finally { unlock(); }} would have done: the thread does
   * nothing more under the lock, so keeping it (renewed for the life of the client, or even only until
   * its lease runs out) would protect nothing and make everyone else wait. Never throws or blocks: the
   * renewer calls it on the timer thread.
   */
  void holderThreadEnded(DefaultLease lease) {
    try {
      if (lease.state().isFinal()) {
        return;
      }
      log.warn("thread '{}' ended while holding lock '{}' (Lock view, {} hold(s), token {}) without unlocking "
          + "it; no other thread can unlock it, so it is released now instead of being renewed. Unlock in a "
          + "finally block, or use runLocked{}", lease.holdKey.thread().getName(), lease.lockName(),
          lease.holdCount(), lease.fencingToken(), sitesFromNowOn(lease.acquiredAt()),
          AcquisitionSite.forReport(lease.acquiredAt()));
      CompletableFuture<Boolean> release = releaseLeaseAsync(lease);
      track(release);
      release.whenComplete((owned, failure) -> {
        if (failure != null) {
          log.debug("could not release lock '{}' of an ended thread: {}", lease.lockName(), failure.toString());
        }
      });
    } catch (RuntimeException e) {
      log.warn("could not release lock '{}' of an ended thread", lease.lockName(), e);
    }
  }

  /**
   * @return a fresh number of this client, in base 36: an acquisition that needs both an owner id and a
   *     waiter id makes both of one ({@link #ownerId}, {@link #waiterId}), which the {@code :w} keeps apart
   */
  String nextSequence() {
    return Long.toString(sequence.incrementAndGet(), 36);
  }

  /**
   * @return the owner id of a number from {@link #nextSequence()}: {@code <clientId>:<seq>}, or {@code
   *     <clientId>:<seq>@<clientName>} when the client has a name
   */
  String ownerId(String sequenceDigits) {
    return clientId + ":" + sequenceDigits + ownerSuffix;
  }

  /** @return the waiter id of a number from {@link #nextSequence()} */
  String waiterId(String sequenceDigits) {
    return clientId + ":w" + sequenceDigits;
  }

  /**
   * @return false if no waiting acquisition took the wake-up (it gave up, or this client is closing and
   *     failed it): the backend then hands the wake-up to the next waiter, which may be another client's.
   *     Reporting it as taken while closing would leave that waiter asleep until its backstop.
   */
  private boolean onWake(String name, String waiterId) {
    Acquisition acquisition = waiters.get(waiterId);
    if (acquisition != null) {
      acquisition.wake();
      return true;
    }
    return false;
  }

  void waiterDone(String waiterId) {
    waiters.remove(waiterId);
  }

  void acquisitionDone(Acquisition acquisition) {
    running.remove(acquisition);
    if (acquisition.ops() instanceof HandOffOps) {
      localWaiters.computeIfPresent(acquisition.name(), (name, queue) -> {
        queue.remove(acquisition);
        return queue.isEmpty() ? null : queue;
      });
      if (!localHolds.containsKey(acquisition.name())) {
        // it may have been the one waiter of this client the backend would wake: another asks instead
        askLocalWaiter(acquisition.name());
      }
    }
  }

  /**
   * A lease of this client on {@code name} ended without handing the lock over: the first acquisition
   * that waits for it locally only (nothing registered on the backend would wake it) asks now. One is
   * enough: it takes the lock and hands it on, or it is refused and registers, and the holder's release
   * wakes it.
   */
  private void askLocalWaiter(String name) {
    java.util.concurrent.ConcurrentLinkedQueue<Acquisition> queue = localWaiters.get(name);
    if (queue == null) {
      return;
    }
    for (Acquisition a : queue) {
      if (a.askIfOnlyLocal()) {
        return;
      }
    }
  }

  /** @return this client's acquisitions of {@code name} in its local queue, in arrival order (for tests) */
  java.util.List<Acquisition> localWaiters(String name) {
    java.util.concurrent.ConcurrentLinkedQueue<Acquisition> queue = localWaiters.get(name);
    return queue == null ? java.util.List.of() : java.util.List.copyOf(queue);
  }

  /**
   * The first waiting acquisition of this client for {@code name} on {@code ops} that can be claimed for a
   * local hand-off ({@link Acquisition#claimForHandOff}), claimed; or null.
   */
  private Acquisition claimLocalWaiter(LockOps ops, String name) {
    java.util.concurrent.ConcurrentLinkedQueue<Acquisition> queue = localWaiters.get(name);
    if (queue == null) {
      return null;
    }
    for (Acquisition a : queue) {
      if (a.ops() == ops && a.claimForHandOff()) {
        return a;
      }
    }
    return null;
  }

  /** Remembers a backend operation until it completes, so that {@link #close()} can wait for it. */
  void track(java.util.concurrent.CompletionStage<?> stage) {
    CompletableFuture<?> f = stage.toCompletableFuture();
    if (!f.isDone()) {
      inFlight.add(f);
      f.whenComplete((v, e) -> inFlight.remove(f));
    }
  }

  /**
   * Starts an acquisition.
   *
   * @param holdKey the Lock view's thread hold, or null for the lease view
   * @param owner the owner id to acquire as (a downgrade's write owner), or null for a new one
   */
  Acquisition startAcquisition(LockOps ops, String name, LockOptions lockOptions, long waitNanos,
      HoldKey holdKey, String owner) {
    return startAcquisition(ops, name, lockOptions, waitNanos, holdKey, owner, null);
  }

  /**
   * Starts an acquisition whose backend replies {@code observer} sees (a semaphore learns its stored
   * permit count from them).
   *
   * @param observer told of every reply on the thread that delivers it, or null
   */
  Acquisition startAcquisition(LockOps ops, String name, LockOptions lockOptions, long waitNanos,
      HoldKey holdKey, String owner, java.util.function.Consumer<AcquireReply> observer) {
    ensureOpen();
    Acquisition acquisition = new Acquisition(this, ops, name, lockOptions, owner, waitNanos, holdKey);
    running.add(acquisition);
    if (acquisition.waiterId() != null) {
      waiters.put(acquisition.waiterId(), acquisition);
      if (ops instanceof HandOffOps && owner == null) {
        localWaiters.compute(name, (n, queue) -> {
          java.util.concurrent.ConcurrentLinkedQueue<Acquisition> q =
              queue != null ? queue : new java.util.concurrent.ConcurrentLinkedQueue<>();
          q.add(acquisition);
          return q;
        });
      }
    }
    if (closed) { // close() began meanwhile and may not have seen this acquisition
      running.remove(acquisition);
      if (acquisition.waiterId() != null) {
        waiters.remove(acquisition.waiterId());
      }
      acquisitionDone(acquisition);
      throw new IllegalStateException("lock client " + clientId + " is closed");
    }
    if (observer != null) {
      acquisition.observe(observer);
    }
    // Queued above before this check, and a lease's end drops its count before it looks for waiters to
    // tell: either this sees no lease left and asks, or that end finds this acquisition.
    if (ops instanceof HandOffOps h && h.handsOffLocally() && owner == null && acquisition.waiterId() != null
        && localHolds.containsKey(name)) {
      java.util.function.Consumer<Acquisition> hook = beforeLocalStart;
      if (hook != null) {
        hook.accept(acquisition);
      }
      acquisition.startLocally(localBackstopNanos);
    } else {
      acquisition.start();
    }
    return acquisition;
  }

  DefaultLease newLease(LockOps ops, String name, String owner, LockOptions lockOptions,
      AcquireReply reply, long sentAt, HoldKey holdKey) {
    DefaultLease lease = new DefaultLease(this, ops, name, owner, lockOptions, reply.fencingToken(),
        reply.replicasAcknowledged(), sentAt, holdKey);
    live.add(lease); // the renewer finds watched leases here
    if (ops instanceof HandOffOps) {
      lease.countLocally();
      localHolds.merge(name, 1, Integer::sum);
    }
    lease.start();
    signals.leaseCreated(lease);
    return lease;
  }

  /**
   * A lease ended (lost): stop tracking it. A Lock view hold stays registered so that the thread's
   * {@code unlock()} reports the loss instead of an {@link IllegalMonitorStateException}.
   */
  void leaseEnded(DefaultLease lease) {
    live.remove(lease);
    lease.endTracking(); // ended here: no longer the leak detector's to report
    if (lease.uncountLocally()) {
      localHolds.computeIfPresent(lease.lockName(), (n, count) -> count == 1 ? null : count - 1);
      if (lease.isLost()) {
        askLocalWaiter(lease.lockName()); // no release will hand it over
      }
    }
    if (lease.isLost() && lease.orphaned() && threadHolds.remove(lease.holdKey, lease)) {
      // The hold stays registered so that its thread's unlock() reports the loss; an ended thread will
      // never call it, and the entry would keep the dead thread for the life of the client.
      log.warn("thread '{}' ended while holding lock '{}' (Lock view, token {}) without unlocking it; the "
          + "lock was held until its lease ran out{}", lease.holdKey.thread().getName(), lease.lockName(),
          lease.fencingToken(), sitesFromNowOn(lease.acquiredAt()), AcquisitionSite.forReport(lease.acquiredAt()));
    }
  }

  /** Drops every reference the client keeps to a lease, including its Lock view hold. */
  void forget(DefaultLease lease) {
    leaseEnded(lease);
    if (lease.holdKey != null) {
      threadHolds.remove(lease.holdKey, lease);
    }
  }

  /**
   * Releases a grant nobody is waiting for any more. Never blocks — it may run on a backend I/O thread,
   * which must not wait for its own replies — and never throws.
   */
  void giveBack(DefaultLease lease) {
    CompletableFuture<Boolean> release = releaseLeaseAsync(lease);
    track(release);
    release.whenComplete((owned, failure) -> {
      if (failure != null) {
        log.debug("could not give back lock '{}': {}", lease.lockName(), failure.toString());
      }
    });
  }

  /**
   * Releases a grant that never became a lease (it arrived with no validity left).
   *
   * @return completes, never exceptionally, once the backend answered or gave up
   */
  CompletableFuture<Void> giveBack(LockOps ops, String name, String owner) {
    CompletionStage<Integer> release;
    try {
      release = ops.release(name, owner, true);
    } catch (RuntimeException e) {
      release = CompletableFuture.failedFuture(e);
    }
    track(release);
    return release.toCompletableFuture().handle((left, failure) -> {
      if (failure != null) {
        log.debug("could not give back lock '{}': {}", name, failure.toString());
      }
      return null;
    });
  }

  /**
   * Releases whatever an acquire attempt that went unanswered (command timeout, dropped connection) may
   * have been granted, for an acquisition that ended without a lease. Such an attempt may have been
   * applied, or may yet be: a hung server runs the commands it has buffered when it resumes. The
   * release travels behind the attempt on the same connection, so once the backend answers it, the
   * attempt has run and its grant, if any, is gone. So it is sent again (capped backoff, as the waits
   * use) until the backend answers, and given up only when the client closes or on an error that is
   * not an outage. Releasing is safe because the owner id was minted for that acquisition alone; if
   * nothing was granted, the release is a no-op. Never blocks, never throws.
   *
   * @return completes, never exceptionally, once the backend answered or the give-back was abandoned
   */
  CompletableFuture<Void> giveBackUnanswered(LockOps ops, String name, String owner) {
    CompletableFuture<Void> done = new CompletableFuture<>();
    giveBackUnanswered(ops, name, owner, 1, done);
    return done;
  }

  private void giveBackUnanswered(LockOps ops, String name, String owner, int attempt, CompletableFuture<Void> done) {
    CompletionStage<Integer> release;
    try {
      release = ops.release(name, owner, true);
    } catch (RuntimeException e) {
      release = CompletableFuture.failedFuture(e);
    }
    release.whenComplete((left, failure) -> {
      if (failure == null) {
        if (left != null && left >= 0) {
          log.warn("lock '{}' had been granted to an acquire attempt whose caller heard no answer (a hung or "
              + "slow backend); given back", name);
        }
        done.complete(null);
        return;
      }
      Throwable cause = failure;
      while (cause instanceof java.util.concurrent.CompletionException && cause.getCause() != null) {
        cause = cause.getCause();
      }
      if (closed || !(cause instanceof BackendUnavailableException)) {
        log.debug("gave up giving back an unanswered attempt on lock '{}': {}", name, cause.toString());
        done.complete(null);
        return;
      }
      ScheduledFuture<?> retry = schedule(() -> giveBackUnanswered(ops, name, owner, attempt + 1, done),
          Acquisition.retryDelayNanos(attempt));
      if (retry.isCancelled()) { // the client closed meanwhile
        done.complete(null);
      }
    });
  }

  /** Releases every hold of a lease; see {@link io.locksmith.Lease#release()}. */
  boolean releaseLease(DefaultLease lease) {
    return Futures.join(releaseLeaseAsync(lease));
  }

  /**
   * Stops renewal, then sends the release. Completes with whether the lease still held the lock, or
   * exceptionally with {@link BackendUnavailableException} (the lease is then abandoned locally).
   */
  private CompletableFuture<Boolean> releaseLeaseAsync(DefaultLease lease) {
    LeaseState before = stopRenewal(lease);
    if (before == null || before == LeaseState.RELEASED) {
      return CompletableFuture.completedFuture(false);
    }
    Acquisition next = null;
    if (before != LeaseState.LOST && lease.ops instanceof HandOffOps handOff && handOff.handsOffLocally()) {
      next = claimLocalWaiter(lease.ops, lease.lockName());
      if (next != null) {
        // the hand-off counts as a lease of this client on the name until its outcome is known, so that
        // acquisitions starting meanwhile queue locally too
        localHolds.merge(lease.lockName(), 1, Integer::sum);
      }
    }
    forget(lease);
    if (before == LeaseState.LOST) {
      releaseLost(lease);
      return CompletableFuture.completedFuture(false);
    }
    CompletableFuture<Boolean> done = new CompletableFuture<>();
    if (next != null) {
      return releaseAndHandOff(lease, (HandOffOps) lease.ops, next, done);
    }
    lease.ops.release(lease.lockName(), lease.owner(), true).whenComplete((left, failure) -> {
      try {
        if (failure != null) {
          lease.abandon();
        } else {
          lease.finishRelease(left >= 0);
        }
      } finally {
        try {
          // before the releasing caller returns: once release() is over, this client's local waiters know
          askLocalWaiter(lease.lockName());
        } finally {
          if (failure != null) {
            done.completeExceptionally(Futures.unwrap(failure));
          } else {
            done.complete(left >= 0);
          }
        }
      }
    });
    return done;
  }

  /**
   * Marks the lease as releasing under the renewer's gate: no renewal of it is sent after this.
   *
   * @return its state before, or null if a release of it is under way already
   */
  private LeaseState stopRenewal(DefaultLease lease) {
    Lock gate = renewer.releaseGate();
    gate.lock();
    try {
      return lease.beginRelease();
    } finally {
      gate.unlock();
    }
  }

  /** A lease whose validity elapsed locally: the server may keep it a little longer, so clean up quietly. */
  private void releaseLost(DefaultLease lease) {
    lease.ops.release(lease.lockName(), lease.owner(), true)
        .whenComplete((left, failure) -> askLocalWaiter(lease.lockName()));
  }

  /**
   * {@link io.locksmith.Lease#releaseAfter}: stops renewal, sets the backend lease to end {@code delay} from
   * now with one renewal of this lease alone, and forgets the lease, so that {@link #close()} does not
   * release it and the lock stays taken for the delay on the backend's own clock. While this client is
   * open, a timer releases the lock when the delay is over, which wakes a waiter at once (and frees it on
   * backends whose leases do not run out on the server while the client lives).
   */
  boolean releaseLeaseAfter(DefaultLease lease, java.time.Duration delay) {
    long delayMillis = DefaultLease.releaseDelayMillis(delay);
    if (delayMillis == 0) {
      return releaseLease(lease);
    }
    long calledAt = System.nanoTime();
    LeaseState before = stopRenewal(lease);
    if (before == null || before == LeaseState.RELEASED) {
      return false;
    }
    String name = lease.lockName();
    forget(lease); // out of the live set: close() leaves the lock to its backend lease
    if (before == LeaseState.LOST) {
      releaseLost(lease);
      return false;
    }
    CompletableFuture<Boolean> done = new CompletableFuture<>();
    // After a renewal of this lease still in flight: on a backend that runs calls on several connections
    // (JDBC) it could otherwise be applied after this one and set the lease time back. Bounded, though the
    // SPI answers every call within its command timeout: nothing here may wait for ever.
    CompletableFuture<List<Boolean>> renewal = lease.renewalAnswered().copy()
        .completeOnTimeout(null, lease.lockOptions().leaseTime().toNanos(), TimeUnit.NANOSECONDS)
        .thenCompose(answered -> lease.ops.renew(
            List.of(new io.locksmith.spi.RenewRequest(name, lease.owner(), delayMillis))));
    track(renewal);
    renewal.whenComplete((replies, failure) -> {
      try {
        Boolean owned = failure == null && replies != null && replies.size() == 1 ? replies.get(0) : null;
        if (owned == null) {
          lease.abandon();
          done.completeExceptionally(failure != null ? Futures.unwrap(failure)
              : new BackendUnavailableException("lock '" + name + "': the backend could not tell whether it "
                  + "kept the lock for " + delay + "; released here, the lock expires with its lease"));
          return;
        }
        lease.finishRelease(owned);
        if (owned) {
          DelayedRelease pending = new DelayedRelease(lease.ops, name, lease.owner(),
              calledAt + TimeUnit.MILLISECONDS.toNanos(delayMillis));
          delayedReleases.add(pending);
          // from the call, not the reply: the backend counts the delay from when it applied the renewal,
          // after the call, so this release never comes before the backend's lease end
          schedule(() -> {
            delayedReleases.remove(pending);
            releaseLater(lease.ops, name, lease.owner());
          }, TimeUnit.MILLISECONDS.toNanos(delayMillis) - (System.nanoTime() - calledAt));
        }
        done.complete(owned);
      } catch (RuntimeException | Error e) {
        done.completeExceptionally(e); // the caller must not wait for ever
        throw e;
      } finally {
        askLocalWaiter(name); // no lease of this client holds it any more: a waiter that waits locally asks
      }
    });
    return Futures.join(done);
  }

  /**
   * The backend reconnected (it may have restarted without its data, or the client moved to a promoted
   * replica): asks whether it still has each lock released after a delay that is not over, with a renewal to
   * the delay's end (which moves that end by at most the renewal's one-way trip). One it no longer has was
   * freed before the delay's end; that cannot be undone, so it is reported at WARN. Never blocks or throws.
   */
  void verifyDelayedReleases() {
    long now = System.nanoTime();
    for (DelayedRelease pending : delayedReleases) {
      long leftMillis = TimeUnit.NANOSECONDS.toMillis(pending.endsAtNanos() - now);
      if (leftMillis < 1) {
        continue; // its release is due anyway
      }
      java.util.concurrent.CompletionStage<List<Boolean>> reply;
      try {
        reply = pending.ops().renew(List.of(new io.locksmith.spi.RenewRequest(pending.name(), pending.owner(),
            leftMillis)));
      } catch (RuntimeException e) {
        log.debug("could not verify the delayed release of lock '{}': {}", pending.name(), e.toString());
        continue;
      }
      track(reply);
      reply.whenComplete((owned, failure) -> {
        if (failure == null && owned != null && owned.size() == 1 && Boolean.FALSE.equals(owned.get(0))
            && delayedReleases.remove(pending)) {
          log.warn("lock '{}' was released after a delay and should stay taken {} ms more, but the backend no "
              + "longer has it (it restarted without its data, or failed over to a replica that had not got "
              + "it): the lock is free before the delay's end, so a minimum interval such as ShedLock's "
              + "lockAtLeastFor is not kept for it", pending.name(), leftMillis);
        } else if (failure != null) {
          log.debug("could not verify the delayed release of lock '{}': {}", pending.name(), failure.toString());
        }
      });
    }
  }

  /** @return how many delayed releases are pending (for tests) */
  int pendingDelayedReleases() {
    return delayedReleases.size();
  }

  /** The release at the end of a {@link #releaseLeaseAfter} delay; the owner id frees nothing else. */
  private void releaseLater(LockOps ops, String name, String owner) {
    try {
      track(ops.release(name, owner, true).whenComplete((left, failure) -> {
        if (failure != null) {
          log.debug("could not release lock '{}' after its delay: {}; it expires with its lease", name,
              failure.toString());
        }
      }));
    } catch (RuntimeException e) {
      log.debug("could not release lock '{}' after its delay: {}; it expires with its lease", name, e.toString());
    }
  }

  /**
   * The release of {@link #releaseLeaseAsync} when another acquisition of this client waits for the same
   * lock: one backend step releases the lease and grants the lock to {@code next} (with its own new token),
   * instead of a release, a wake-up and the waiter's own round trip. The releasing lease ends first; then
   * {@code next} learns its outcome.
   */
  private CompletableFuture<Boolean> releaseAndHandOff(DefaultLease lease, HandOffOps ops, Acquisition next,
      CompletableFuture<Boolean> done) {
    long sentAt = ticker().nanoTime();
    java.util.concurrent.CompletionStage<io.locksmith.spi.HandOffReply> reply;
    try {
      reply = ops.releaseAndHandOff(lease.lockName(), lease.owner(), next.owner(), next.leaseMillis(),
          next.waiterId());
    } catch (RuntimeException e) { // nothing was sent: the waiter goes on by itself
      handOffOver(lease.lockName(), next, sentAt, null, null);
      throw e;
    }
    track(reply); // close() lets it land: a grant it carries for a waiter that gave up is given back
    reply.whenComplete((r, failure) -> {
      Throwable cause = failure == null ? null : Futures.unwrap(failure);
      try {
        if (failure != null) {
          lease.abandon();
        } else {
          lease.finishRelease(r.releaserHeld());
        }
      } finally {
        // the next owner's lease exists before the releasing caller returns: its next acquisition queues
        // behind it locally
        try {
          handOffOver(lease.lockName(), next, sentAt, r, cause);
        } finally {
          if (failure != null) {
            done.completeExceptionally(cause);
          } else {
            done.complete(r.releaserHeld());
          }
        }
      }
    });
    return done;
  }

  /** Tells the claimed waiter how the hand-off ended, then stops counting the hand-off as a local lease. */
  private void handOffOver(String name, Acquisition next, long sentAt, io.locksmith.spi.HandOffReply reply,
      Throwable failure) {
    try {
      next.handOffDone(sentAt, reply != null && reply.releaserHeld(), reply == null ? null : reply.grant(),
          failure);
    } finally {
      localHolds.computeIfPresent(name, (n, count) -> count == 1 ? null : count - 1);
      if (reply == null || reply.grant() == null) {
        askLocalWaiter(name); // no new lease of this client: a waiter that waits locally only asks
      }
    }
  }

  // ------------------------------------------------------------------ Lock view

  DefaultLease threadLease(Primitive primitive, String name) {
    return threadHolds.get(new HoldKey(primitive, name, Thread.currentThread()));
  }

  /**
   * Re-entry of the calling thread's hold: one round trip that never mints a new grant. Adds one hold to
   * the lease's own count only once granted; the server's count in the reply is not used (see {@link
   * DefaultLease#onReentered}).
   *
   * @throws LeaseLostException if the hold is gone
   * @throws BackendUnavailableException if the backend did not answer; the thread has no extra hold
   *     (whether the server counted one does not matter: the last unlock releases every hold)
   */
  void reenter(DefaultLease lease) {
    if (lease.state() == LeaseState.LOST) {
      throw new LeaseLostException(lease.lockName(), "this thread's hold was lost; unlock and lock again");
    }
    long sentAt = ticker().nanoTime();
    AcquireReply reply = Futures.join(lease.ops.acquire(lease.lockName(), lease.owner(),
        lease.lockOptions().leaseTime().toMillis(), AcquireMode.REENTER, null));
    if (!reply.granted()) {
      lease.markLost("re-entry found the lock no longer held by this owner");
      throw new LeaseLostException(lease.lockName(), "this thread's hold was lost; unlock and lock again");
    }
    lease.onReentered(sentAt);
  }

  void registerThreadHold(DefaultLease lease) {
    threadHolds.put(lease.holdKey, lease);
  }

  /**
   * Drops one hold of the calling thread's lease. The last local hold releases every hold on the server,
   * so the lock is free after as many unlocks as locks even where the server counted differently. Any
   * other unlock takes one local hold away whatever its outcome — the thread has given it up — and uses
   * the server's reply only to learn whether the lock is still ours.
   *
   * @throws LeaseLostException if the lock was lost (the hold is dropped all the same)
   * @throws BackendUnavailableException if the backend did not answer (the hold is dropped all the same;
   *     for the last hold the server lets the lock expire)
   */
  void unlockOne(DefaultLease lease) {
    if (lease.state() == LeaseState.LOST) {
      if (lease.dropLocalHold() == 0) {
        forget(lease);
        lease.ops.release(lease.lockName(), lease.owner(), true);
      }
      throw new LeaseLostException(lease.lockName(), "it was lost while this thread held it");
    }
    if (lease.localHolds() <= 1) { // not holdCount(): a loss right now must not forget the outer holds
      if (!releaseLease(lease)) {
        throw new LeaseLostException(lease.lockName(), "it was lost while this thread held it");
      }
      return;
    }
    int left;
    try {
      left = Futures.join(lease.ops.release(lease.lockName(), lease.owner(), false));
    } finally {
      lease.dropHold();
    }
    if (left <= 0) {
      // -1: not ours any more. 0: the server freed it although this thread still holds it, so it counted
      // fewer holds (Redlock nodes that missed a re-entry); either way the lock protects nothing now.
      lease.markLost(left < 0 ? "unlock found the lock no longer held by this owner"
          : "a partial unlock freed the lock on the server, which counted fewer holds than this thread");
      throw new LeaseLostException(lease.lockName(), "it was lost while this thread held it");
    }
  }

  /** A timer that was never scheduled because the client closed. */
  private static final class CancelledTimer extends CompletableFuture<Object>
      implements ScheduledFuture<Object> {
    CancelledTimer() {
      cancel(false);
    }

    @Override
    public long getDelay(TimeUnit unit) {
      return 0;
    }

    @Override
    public int compareTo(java.util.concurrent.Delayed o) {
      return 0;
    }
  }
}
