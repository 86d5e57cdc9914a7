package io.locksmith.shedlock;

import io.locksmith.Lease;
import io.locksmith.LeaseState;
import io.locksmith.LockClient;
import io.locksmith.LockException;
import io.locksmith.LockOptions;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.core.AbstractSimpleLock;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A ShedLock {@link ExtensibleLockProvider} over any Locksmith {@link LockClient} (Redis, Redlock,
 * ZooKeeper, JDBC, in-JVM): an application swaps its provider bean for this one and its
 * {@code @SchedulerLock} jobs keep their code.
 *
 * <p><b>Semantics</b> (ShedLock's, as its own contract tests check them):
 * <ul>
 *   <li>{@link #lock} never waits: a lock held elsewhere gives {@link Optional#empty()} and the job is
 *       skipped.</li>
 *   <li>{@code lockAtMostFor} is enforced here, to the millisecond, whatever the backend's shortest lease:
 *       the Locksmith lease is released when it passes (and {@link SimpleLock#extend} moves that
 *       point). The lease itself is watched (renewed while this process lives) for {@code lockAtMostFor},
 *       but at least {@link #SHORTEST_BACKEND_LEASE} and at most {@link #MAX_BACKEND_LEASE}:
 *       if this process dies, the lock frees itself within that lease, never later than
 *       {@code lockAtMostFor} for any value of at least 1 s.</li>
 *   <li>{@code unlock()} before {@code lockAtLeastFor} has passed keeps the lock until then, with
 *       {@link Lease#releaseAfter}: the backend lease is set to end at that instant, so the lock stays taken
 *       even if this instance shuts down (closing this provider and the client) or dies right after the job
 *       (except on ZooKeeper and database session locks, whose holds end with the client; see their
 *       guides). After {@code lockAtLeastFor}, {@code unlock()} releases at once.</li>
 *   <li>{@code extend} returns a new handle with the new bounds and invalidates the old one; an expired or
 *       lost lock cannot be extended (empty).</li>
 * </ul>
 *
 * <p><b>What ShedLock providers do not offer:</b> the running execution's fencing token, {@link
 * #currentFencingToken()}, for the task to fence its writes (see {@code docs/fencing.md}); and a lock
 * whose loss (e.g. a partition of this process) is signalled on the lease rather than found out later.
 *
 * <p>Thread-safe. Owns one daemon timer thread, for {@code lockAtMostFor}; {@link #close()} stops it. Locks
 * of jobs still running when the client is closed are released by the client's close. Backend failures
 * while locking are thrown as Locksmith's {@link LockException}s (ShedLock then logs the job as not run).
 */
public final class LocksmithLockProvider implements ExtensibleLockProvider, AutoCloseable {
  /** The longest lease asked of the backend; a longer {@code lockAtMostFor} is kept by renewals. */
  public static final Duration MAX_BACKEND_LEASE = Duration.ofSeconds(30);

  /**
   * The shortest lease asked of the backend, also for a shorter {@code lockAtMostFor} (which the release timer
   * keeps). A grant must arrive with most of its lease left, or the client gives it back as too late: with
   * the watched-lease floor of 100 ms a round trip over about 47 ms (a loaded machine, a remote backend)
   * skipped the job although nobody held the lock. The price: a process that dies holding such a lock
   * leaves it taken for up to this long, not {@code lockAtMostFor}.
   */
  public static final Duration SHORTEST_BACKEND_LEASE = Duration.ofSeconds(1);

  private static final Logger log = LoggerFactory.getLogger(LocksmithLockProvider.class);
  private static final ThreadLocal<Lease> CURRENT = new ThreadLocal<>();

  private final LockClient client;
  private final ScheduledExecutorService timer;

  /**
   * @param client the Locksmith client whose locks the jobs take; the caller closes it
   * @throws NullPointerException if {@code client} is null
   */
  public LocksmithLockProvider(LockClient client) {
    this.client = Objects.requireNonNull(client, "client");
    ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, r -> {
      Thread thread = new Thread(r, "locksmith-shedlock-" + client.clientId());
      thread.setDaemon(true);
      return thread;
    });
    t.setRemoveOnCancelPolicy(true);
    this.timer = t;
  }

  /**
   * The fencing token of the lock the calling thread's job runs under: ShedLock runs a job on the thread
   * that locked it, so a {@code @SchedulerLock} method can fence its writes with this.
   *
   * @return the token, or empty outside a job locked by this provider
   */
  public static OptionalLong currentFencingToken() {
    Lease lease = CURRENT.get();
    return lease == null ? OptionalLong.empty() : OptionalLong.of(lease.fencingToken());
  }

  /** @return the lease of the lock the calling thread's job runs under, or empty */
  public static Optional<Lease> currentLease() {
    return Optional.ofNullable(CURRENT.get());
  }

  @Override
  public Optional<SimpleLock> lock(LockConfiguration config) {
    Objects.requireNonNull(config, "config");
    Duration atMost = config.getLockAtMostFor();
    Duration lease = atMost.compareTo(SHORTEST_BACKEND_LEASE) < 0 ? SHORTEST_BACKEND_LEASE
        : atMost.compareTo(MAX_BACKEND_LEASE) > 0 ? MAX_BACKEND_LEASE : atMost;
    Optional<Lease> granted = client.lock(config.getName(), LockOptions.watched(lease)).tryAcquire();
    if (granted.isEmpty()) {
      return Optional.empty();
    }
    Held held = new Held(granted.get());
    if (!held.releaseAt(config.getLockAtMostUntil())) {
      // ShedLock's contract: the lock was obtained, and it expires by lockAtMostFor like any other
      log.warn("ShedLock lock '{}' was granted after its lockAtMostFor ({} ms) had passed: it is released"
          + " already and the job runs unprotected; give lockAtMostFor more than a round trip to the backend",
          config.getName(), atMost.toMillis());
    }
    CURRENT.set(held.lease);
    return Optional.of(new Handle(config, held));
  }

  /** Stops the timer; locks still held stay held until their leases run out. */
  @Override
  public void close() {
    timer.shutdownNow();
  }

  @Override
  public String toString() {
    return "LocksmithLockProvider[" + client + "]";
  }

  /** One Locksmith lease and the release scheduled for it; shared by a handle and its extensions. */
  private final class Held {
    final Lease lease;
    private ScheduledFuture<?> release; // guarded by this

    Held(Lease lease) {
      this.lease = lease;
    }

    /** @return false (and released now, on this thread) if {@code until} has already passed */
    synchronized boolean releaseAt(Instant until) {
      if (release != null) {
        release.cancel(false);
      }
      long delay = Duration.between(ClockProvider.now(), until).toNanos();
      if (delay <= 0) {
        releaseNow();
        return false;
      }
      release = timer.schedule(this::releaseNow, delay, TimeUnit.NANOSECONDS);
      return true;
    }

    /**
     * The job is done: the lock stays taken until {@code until} (lockAtLeastFor) on the backend, whatever
     * happens to this process meanwhile, and is released then; released now if {@code until} has passed.
     */
    synchronized void releaseAtLeastAt(Instant until) {
      if (release != null) {
        release.cancel(false);
      }
      Duration delay = Duration.between(ClockProvider.now(), until);
      if (delay.compareTo(LockOptions.MAX_LEASE_TIME) > 0) {
        log.warn("ShedLock lock '{}': lockAtLeastFor ends in {}, beyond the longest lease a backend keeps ({}); "
            + "it is kept for that long", lease.lockName(), delay, LockOptions.MAX_LEASE_TIME);
        delay = LockOptions.MAX_LEASE_TIME;
      }
      try {
        if (delay.isNegative() || delay.isZero()) {
          lease.release();
        } else if (!lease.releaseAfter(delay)) {
          // the lock was lost during the job (its lease ran out, an operator unlocked it, the backend
          // restarted without its data or failed over): nothing keeps it for lockAtLeastFor
          log.warn("ShedLock lock '{}' was lost before the job ended, so it cannot be kept for the rest of "
              + "lockAtLeastFor ({} ms more): another instance may run the job again at once", lease.lockName(),
              delay.toMillis());
        }
      } catch (RuntimeException e) { // a LockException, or the client closing meanwhile: the job has run
        log.warn("could not release ShedLock lock '{}' (it expires with its lease): {}", lease.lockName(),
            e.toString());
      }
    }

    /**
     * Releases the lease now. Synchronized so that a caller told "expired" never returns while the timer's
     * release of the same lease is still on its way to the backend.
     */
    synchronized void releaseNow() {
      if (release != null) {
        release.cancel(false);
      }
      try {
        lease.release();
      } catch (LockException e) {
        log.warn("could not release ShedLock lock '{}': {}", lease.lockName(), e.getMessage());
      }
    }

    boolean usable() {
      return lease.state() == LeaseState.HELD;
    }
  }

  /** A ShedLock handle: unlock keeps the lock until lockAtLeastFor; extend moves lockAtMostFor. */
  private final class Handle extends AbstractSimpleLock {
    private final Held held;

    Handle(LockConfiguration config, Held held) {
      super(config);
      this.held = held;
    }

    @Override
    protected void doUnlock() {
      forget();
      held.releaseAtLeastAt(lockConfiguration.getLockAtLeastUntil());
    }

    /** The calling thread's job no longer runs under this lease. */
    private void forget() {
      if (CURRENT.get() == held.lease) {
        CURRENT.remove();
      }
    }

    @Override
    protected Optional<SimpleLock> doExtend(LockConfiguration extended) {
      if (!ClockProvider.now().isBefore(lockConfiguration.getLockAtMostUntil()) || !held.usable()) {
        // expired (or lost): the timer's release may not have run yet (it counts on its own clock), so
        // release here, before answering, for "cannot extend" to mean "free" as ShedLock's callers expect
        held.releaseNow();
        forget();
        return Optional.empty(); // and this handle is spent (AbstractSimpleLock): nobody unlocks it
      }
      if (!held.releaseAt(extended.getLockAtMostUntil())) {
        return Optional.empty();
      }
      return Optional.of(new Handle(extended, held));
    }
  }
}
