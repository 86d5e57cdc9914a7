package io.locksmith.spring.integration;

import io.locksmith.BackendUnavailableException;
import io.locksmith.DistributedLock;
import io.locksmith.Lease;
import io.locksmith.LeaseLostException;
import io.locksmith.LockClient;
import io.locksmith.LockKind;
import io.locksmith.LockOptions;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.LockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;
import org.springframework.scheduling.TaskScheduler;

/**
 * A Spring Integration {@link LockRegistry} ({@link ExpirableLockRegistry} and {@link
 * RenewableLockRegistry}) over any Locksmith {@link LockClient} (Redis, Redlock, ZooKeeper, JDBC,
 * in-JVM): an application replaces its {@code RedisLockRegistry} or {@code JdbcLockRegistry} bean with
 * this one and the code that obtains locks from it, the aggregators, leader initiators and {@code
 * executeLocked} calls, stays as it is.
 *
 * <p><b>Semantics</b>, as Spring Integration's own registries have them (the module's contract suite runs
 * against those too; {@code docs/adapters.md} lists where they differ):
 * <ul>
 *   <li>{@link #obtain(Object)} takes {@link String} keys only and returns the same {@link Lock} object for
 *       the same key until {@link #expireUnusedOlderThan(long)} drops it.</li>
 *   <li>The lock is owned by the thread that locked it and is re-entrant per thread; it excludes every
 *       other thread, of this process or any other that uses the same backend and name. {@code
 *       tryLock(time, unit)} waits at most {@code time} (a negative time is no wait, as {@link Lock}
 *       specifies), {@code lock()} waits without bound and ignores interrupts, {@code
 *       lockInterruptibly()} ends with {@link InterruptedException} when interrupted.</li>
 *   <li>{@code unlock()} by a thread that does not hold the lock throws {@link IllegalStateException}
 *       (as {@code RedisLockRegistry}'s locks do). {@code unlock()} of a lock whose lease was lost (it
 *       expired, or an operator force-unlocked it) drops the thread's hold all the same and throws {@link
 *       ConcurrentModificationException}, as Spring's registries do for a lock that expired in the store:
 *       work done under it may have overlapped with another holder.</li>
 *   <li>{@code newCondition()} throws {@link UnsupportedOperationException}.</li>
 *   <li>{@link LockRegistry}'s {@code executeLocked} methods run their task under the lock, re-entrantly,
 *       and unlock after it whatever it throws; the variants with a {@link Duration} wait at most that long
 *       and throw {@link java.util.concurrent.TimeoutException} (the task not run) if the lock stayed
 *       taken.</li>
 * </ul>
 *
 * <p><b>Leases.</b> By default each lock is held on a watched lease of the client's default length (30
 * seconds unless the client says otherwise), renewed by the client every third of it while the thread
 * holds the lock: a holder that works for an hour keeps the lock, and one whose process dies frees it
 * within one lease. {@link Builder#fixedLease(Duration)} gives leases that simply expire, the behaviour
 * of Spring's registries without a renewal scheduler; {@link #renewLock(Object)} then extends them. Expiry
 * is judged by the backend (Redis's or the database's clock, ZooKeeper's session) or by the holder's own
 * monotonic clock, never by comparing the clocks of different processes.
 *
 * <p><b>What Spring's registries do not offer:</b> the calling thread's {@link #currentLease(Object)
 * lease} and {@link #fencingToken(Object) fencing token}, to fence writes to the protected resource
 * against a holder that was paused past its lease ({@code docs/fencing.md}); and loss signals: a lease
 * knows when it is lost ({@link Lease#onLost(Runnable)}), and {@link Builder#lossListener(LossListener)}
 * hears of every lock of this registry that is lost while held.
 *
 * <p><b>Failure.</b> Locksmith's exceptions are passed on as they are, not translated into Spring's
 * {@code DataAccessException}s: {@link BackendUnavailableException} when the backend cannot be reached
 * ({@code tryLock()} at once; {@code tryLock(time, unit)} once its wait runs out; {@code lock()} and
 * {@code lockInterruptibly()} wait through outages; {@code unlock()} drops the thread's hold all the
 * same and the server lets the lock expire with its lease), {@link LeaseLostException} when a thread
 * re-enters a lock whose hold it has lost. Nothing is granted that the backend did not grant.
 *
 * <p><b>Two Spring Integration lines.</b> The same class is in {@code locksmith-spring-integration}
 * (Spring Integration 6.5) and {@code locksmith-spring-integration7} (7.0 and 7.1): its code is shared,
 * compiled against each line. On SI 7 it is an {@code ExpirableLockRegistry<DistributedLock>} and {@code
 * RenewableLockRegistry<DistributedLock>}, as Spring's Redis and JDBC registries are, and its locks are
 * SI 7 {@code DistributedLock}s; {@link LocksmithLock} gives {@code lock(ttl)} and {@code tryLock(wait,
 * ttl)} on both lines. Take the artifact of the application's line: SI 7 calls {@link
 * #renewLock(Object, Duration)}, which the 6.5 interfaces do not have.
 *
 * <p><b>Thread-safety.</b> The registry and its locks are thread-safe. The registry starts no thread and
 * owns no resource: closing the client is the application's business (held locks are then released).
 * Holds live in the client, per thread and lock name: a lock object dropped by {@link
 * #expireUnusedOlderThan(long)} while a thread still uses it keeps excluding correctly, and two
 * registries over the <em>same</em> client share holds (the same thread re-enters through either).
 * Registries over two clients are two owners, as two processes are.
 */
public final class LocksmithLockRegistry implements RegistryLine {
  private static final Logger log = LoggerFactory.getLogger(LocksmithLockRegistry.class);

  private final LockClient client;
  private final LockOptions lockOptions;
  private final String namePrefix;
  private final boolean fair;
  private final LossListener lossListener;
  private final ConcurrentMap<String, RegistryLock> locks = new ConcurrentHashMap<>();
  /** The held leases the loss listener watches: one registration per lease, whichever lock object took it. */
  private final java.util.Set<Lease> watchedLeases = ConcurrentHashMap.newKeySet();

  /**
   * A registry with the client's default lease policy (watched leases unless the client was built
   * otherwise), lock names equal to the keys, and no loss listener: the one-bean replacement.
   *
   * @param client the Locksmith client whose locks this registry hands out; the caller closes it
   * @throws NullPointerException if {@code client} is null
   * @throws IllegalStateException if the client is closed
   */
  public LocksmithLockRegistry(LockClient client) {
    this(builder(client).validate());
  }

  private LocksmithLockRegistry(Builder b) {
    this.client = b.client;
    this.lockOptions = b.resolvedOptions;
    this.namePrefix = b.namePrefix;
    this.fair = b.fair;
    this.lossListener = b.lossListener;
  }

  /**
   * @param client the Locksmith client whose locks the registry hands out; the caller closes it
   * @return a builder with the defaults of {@link #LocksmithLockRegistry(LockClient)}
   * @throws NullPointerException if {@code client} is null
   */
  public static Builder builder(LockClient client) {
    return new Builder(Objects.requireNonNull(client, "client"));
  }

  /**
   * The lock of a key: the same object for the same key until {@link #expireUnusedOlderThan(long)}
   * drops it. Creating it sends nothing to the backend.
   *
   * @param lockKey the key; a {@link String}, as Spring's Redis and JDBC registries require. The lock's
   *     name on the backend is the registry's {@linkplain Builder#namePrefix(String) name prefix} followed
   *     by the key
   * @return the lock, owned by the thread that locks it
   * @throws IllegalArgumentException if {@code lockKey} is null or not a {@code String}, or the name is
   *     not a valid Locksmith lock name (blank, too long for the client, control characters)
   * @throws IllegalStateException if the client is closed
   */
  @Override
  public LocksmithLock obtain(Object lockKey) {
    String key = keyOf(lockKey);
    return locks.computeIfAbsent(key, k -> new RegistryLock(k, newDelegate(k)));
  }

  /**
   * Drops the lock objects that no thread of this process holds or waits for and that have not been
   * locked or unlocked for at least {@code age} milliseconds; {@link #obtain(Object)} then creates new
   * ones. Nothing on the backend changes. A dropped object that a thread still has keeps working (the
   * holds live in the client), so a race with a thread about to lock it is harmless.
   *
   * @param age the least idle time, in milliseconds; 0 or less drops every idle lock object
   */
  @Override
  public void expireUnusedOlderThan(long age) {
    long now = System.nanoTime();
    long ageNanos = TimeUnit.MILLISECONDS.toNanos(Math.max(0, age));
    locks.values().removeIf(lock -> lock.idleFor(ageNanos, now));
  }

  /**
   * Renews the calling thread's lease of the key's lock now, to a full lease from this moment, and
   * confirms with the backend that the lock is still this thread's. Watched leases (the default) are
   * renewed by the client anyway; this is for {@linkplain Builder#fixedLease(Duration) fixed} leases, or
   * to learn at once that a lock is still held. Two round trips to the backend (one re-entry, one
   * unlock of it).
   *
   * @param lockKey the key, a {@link String}
   * @throws IllegalStateException if the calling thread does not hold the lock (another thread of this
   *     process may; holds are per thread), or its lease was lost before or is found lost by the renewal
   *     (the thread still has to {@code unlock()}, which then throws {@link
   *     ConcurrentModificationException})
   * @throws IllegalArgumentException if {@code lockKey} is null or not a {@code String}, or not a valid
   *     lock name
   * @throws BackendUnavailableException if the backend cannot be reached; the lease is then as it was
   *     (renewed by the client's watchdog if watched, otherwise expiring when it would have)
   */
  @Override
  public void renewLock(Object lockKey) {
    renew(keyOf(lockKey));
  }

  /**
   * Spring Integration 7's renewal with a time to live: renews the calling thread's lease of the key's
   * lock now, as {@link #renewLock(Object)} does, to a full lease of its own length, which must be at
   * least {@code ttl}. A Locksmith lease keeps the length it was taken with (the registry's lease, or the
   * {@code ttl} of {@link LocksmithLock#lock(Duration)}): a renewal cannot lengthen it, so a longer {@code
   * ttl} is refused rather than granted short; a shorter one is met with the longer lease (the lock is
   * then held longer than asked, never shorter).
   *
   * @param lockKey the key, a {@link String}
   * @param ttl how long the lock must stay held from now; positive, at most the lease's length
   * @throws NullPointerException if {@code ttl} is null
   * @throws IllegalArgumentException if {@code ttl} is not positive or longer than the lease's length
   *     (then nothing was renewed), or {@code lockKey} is not a {@code String} or not a valid lock name
   * @throws IllegalStateException as {@link #renewLock(Object)}
   * @throws BackendUnavailableException as {@link #renewLock(Object)}
   */
  public void renewLock(Object lockKey, Duration ttl) {
    Objects.requireNonNull(ttl, "ttl");
    if (ttl.isNegative() || ttl.isZero()) {
      throw new IllegalArgumentException("ttl must be positive: " + ttl);
    }
    String key = keyOf(lockKey);
    RegistryLock known = locks.get(key);
    if ((known != null ? known.delegate : newDelegate(key)).currentThreadLease().isEmpty()) {
      throw notHeld(key); // before judging the ttl: a thread without the lock learns that first
    }
    LockOptions held = known != null ? known.heldOptions() : null;
    Duration length = (held != null ? held : lockOptions).leaseTime();
    if (ttl.compareTo(length) > 0) {
      throw new IllegalArgumentException("cannot renew lock '" + key + "' for " + ttl + ": its lease is "
          + length + " long and a renewal restarts it at that length; take the lock with lock(ttl) or"
          + " tryLock(wait, ttl), or build the registry with a longer lease");
    }
    renew(key);
  }

  private void renew(String key) {
    RegistryLock known = locks.get(key);
    DistributedLock lock = known != null ? known.delegate : newDelegate(key);
    Lease lease = lock.currentThreadLease().orElseThrow(() -> notHeld(key));
    if (lease.state().isFinal()) {
      throw new IllegalStateException("cannot renew lock '" + key + "': its lease is " + lease.state()
          + "; unlock it and lock it again");
    }
    // a re-entry is the public way to renew now: the backend deepens the hold only if it is still this
    // owner's, and resets its expiry to a full lease; the unlock gives the extra hold back
    try {
      if (!lock.tryLock()) {
        throw new IllegalStateException("cannot renew lock '" + key + "': the re-entry was refused");
      }
    } catch (LeaseLostException e) {
      throw new IllegalStateException("cannot renew lock '" + key + "': its lease was lost; unlock it and"
          + " lock it again", e);
    }
    try {
      lock.unlock();
    } catch (LeaseLostException e) {
      throw new IllegalStateException("lock '" + key + "' was lost while it was being renewed", e);
    }
  }

  /**
   * Not used, by design: Locksmith renews watched leases itself, on the client's renewal thread, every
   * third of the lease, with no scheduler to configure. Accepted (and ignored) for registries with
   * watched leases, so that configuration written for Spring's registries keeps working.
   *
   * @param renewalTaskScheduler ignored
   * @throws NullPointerException if {@code renewalTaskScheduler} is null
   * @throws IllegalStateException if this registry uses {@linkplain Builder#fixedLease(Duration) fixed
   *     leases}, which are never renewed automatically: use watched leases for automatic renewal, or
   *     {@link #renewLock(Object)}
   */
  @Override
  public void setRenewalTaskScheduler(TaskScheduler renewalTaskScheduler) {
    Objects.requireNonNull(renewalTaskScheduler, "renewalTaskScheduler");
    if (!lockOptions.watched()) {
      throw new IllegalStateException("this registry's leases are fixed (" + lockOptions + ") and are never"
          + " renewed automatically, with or without a scheduler: build it with watchedLease(...) to have"
          + " held locks renewed, or call renewLock(key)");
    }
    log.debug("{}: renewal task scheduler ignored; watched leases are renewed by the Locksmith client", this);
  }

  /**
   * The calling thread's lease of the key's lock, for its fencing token, state and loss signals. A lease
   * that was lost stays here (in state {@link io.locksmith.LeaseState#LOST}) until the thread unlocks.
   *
   * @param lockKey the key, a {@link String}
   * @return the lease, or empty if the calling thread does not hold the lock
   * @throws IllegalArgumentException if {@code lockKey} is null or not a {@code String}, or not a valid
   *     lock name
   * @throws IllegalStateException if the client is closed
   */
  public Optional<Lease> currentLease(Object lockKey) {
    String key = keyOf(lockKey);
    RegistryLock known = locks.get(key);
    return (known != null ? known.delegate : newDelegate(key)).currentThreadLease();
  }

  /**
   * The fencing token of the calling thread's hold of the key's lock: send it with every access to the
   * protected resource and have the resource refuse smaller ones ({@code docs/fencing.md}). It grows with
   * every grant of the lock and stays the same across re-entries.
   *
   * @param lockKey the key, a {@link String}
   * @return the token, or empty if the calling thread does not hold the lock
   * @throws IllegalArgumentException if {@code lockKey} is null or not a {@code String}, or not a valid
   *     lock name
   * @throws IllegalStateException if the client is closed
   */
  public OptionalLong fencingToken(Object lockKey) {
    return currentLease(lockKey).map(l -> OptionalLong.of(l.fencingToken())).orElse(OptionalLong.empty());
  }

  /** @return the client this registry's locks come from */
  public LockClient client() {
    return client;
  }

  /** @return the lease policy of this registry's locks */
  public LockOptions lockOptions() {
    return lockOptions;
  }

  @Override
  public String toString() {
    return "LocksmithLockRegistry[" + client + ", " + lockOptions + (fair ? ", fair" : "")
        + (namePrefix.isEmpty() ? "" : ", prefix '" + namePrefix + "'") + "]";
  }

  private static IllegalStateException notHeld(String key) {
    return new IllegalStateException("cannot renew lock '" + key + "': it is not held by the calling thread "
        + Thread.currentThread().getName());
  }

  private static String keyOf(Object lockKey) {
    if (lockKey instanceof String s) {
      return s;
    }
    throw new IllegalArgumentException("LocksmithLockRegistry takes String lock keys only, as Spring's"
        + " RedisLockRegistry and JdbcLockRegistry do; got "
        + (lockKey == null ? "null" : lockKey.getClass().getName() + " " + lockKey));
  }

  private DistributedLock newDelegate(String key) {
    return newDelegate(key, lockOptions);
  }

  /** A view of the key's lock with other options; holds are the client's, per thread and name, shared by all views. */
  private DistributedLock newDelegate(String key, LockOptions options) {
    String name = namePrefix + key;
    return fair ? client.fairLock(name, options) : client.lock(name, options);
  }

  void lost(String key, Lease lease) {
    if (lossListener == null) {
      return;
    }
    try {
      lossListener.lockLost(key, lease);
    } catch (RuntimeException e) {
      log.warn("{}: loss listener failed for lock '{}': {}", this, key, e.toString());
    }
  }

  /**
   * Told when a lock of the registry is lost while a thread holds it (its lease expired without renewal,
   * the backend could not be reached for its whole validity, or an operator force-unlocked it): work
   * under it may now overlap with another holder. The holding thread learns it at its next {@code
   * unlock()} (a {@link ConcurrentModificationException}); this tells it as it happens, so the work can
   * be stopped.
   */
  @FunctionalInterface
  public interface LossListener {
    /**
     * Called once per lost lease, on the client's event thread; it may block briefly. An exception it
     * throws is logged and otherwise ignored.
     *
     * @param lockKey the registry key of the lock
     * @param lease the lease that was lost
     */
    void lockLost(String lockKey, Lease lease);
  }

  /**
   * Builds a {@link LocksmithLockRegistry}. Not thread-safe; every setting is checked by {@link #build()}.
   */
  public static final class Builder {
    private final LockClient client;
    private Duration leaseTime;
    private Boolean watched;
    private String namePrefix = "";
    private boolean fair;
    private LossListener lossListener;
    private LockOptions resolvedOptions;

    private Builder(LockClient client) {
      this.client = client;
    }

    /**
     * Leases renewed by the client every third of {@code leaseTime} while held (the default, with the
     * client's default lease time): a lock is held as long as its holder works, and a holder that dies
     * frees it within one lease.
     *
     * @param leaseTime {@link LockOptions#MIN_WATCHED_LEASE_TIME} to {@link LockOptions#MAX_LEASE_TIME};
     *     checked by {@link #build()}
     * @return this builder
     */
    public Builder watchedLease(Duration leaseTime) {
      this.leaseTime = leaseTime;
      this.watched = true;
      return this;
    }

    /**
     * Leases that expire after {@code leaseTime} unless the holder unlocks or calls {@link
     * LocksmithLockRegistry#renewLock(Object)} first: Spring's registries' {@code expireAfter} / {@code
     * timeToLive} without a renewal scheduler. Work that may outlast the lease then runs unprotected.
     *
     * @param leaseTime {@link LockOptions#MIN_LEASE_TIME} to {@link LockOptions#MAX_LEASE_TIME}; checked by
     *     {@link #build()}
     * @return this builder
     */
    public Builder fixedLease(Duration leaseTime) {
      this.leaseTime = leaseTime;
      this.watched = false;
      return this;
    }

    /**
     * @param prefix put before every key to make the lock name, like the {@code registryKey} of Spring's
     *     {@code RedisLockRegistry} or the {@code region} of its JDBC one; empty (the default) for none.
     *     (The client's namespace is applied as well.) Checked by {@link #build()}
     * @return this builder
     */
    public Builder namePrefix(String prefix) {
      this.namePrefix = prefix;
      return this;
    }

    /**
     * @param fair {@code true} for fair locks, granted in arrival order ({@link LockClient#fairLock});
     *     the client's backend must support {@link LockKind#FAIR}. Checked by {@link #build()}
     * @return this builder
     */
    public Builder fair(boolean fair) {
      this.fair = fair;
      return this;
    }

    /**
     * @param listener told of every lock of the registry lost while held; null (the default) for none
     * @return this builder
     */
    public Builder lossListener(LossListener listener) {
      this.lossListener = listener;
      return this;
    }

    /**
     * @return the registry
     * @throws NullPointerException if the name prefix or a lease time that was set is null
     * @throws IllegalArgumentException if the lease time is out of range ({@link LockOptions}'s bounds),
     *     not longer than the client's clock-drift allowance, or the name prefix makes invalid lock names
     * @throws UnsupportedOperationException if {@code fair} is set and the backend has no fair locks
     * @throws IllegalStateException if the client is closed
     */
    public LocksmithLockRegistry build() {
      return new LocksmithLockRegistry(validate());
    }

    private Builder validate() {
      Objects.requireNonNull(namePrefix, "namePrefix");
      if (watched == null) {
        resolvedOptions = client.options().defaultLockOptions();
      } else {
        Objects.requireNonNull(leaseTime, "leaseTime");
        resolvedOptions = watched ? LockOptions.watched(leaseTime) : LockOptions.fixed(leaseTime);
      }
      if (fair && !client.capabilities().supports(LockKind.FAIR)) {
        throw new UnsupportedOperationException("fair(true): the client's backend has no fair locks ("
            + client.capabilities() + ")");
      }
      // the client checks names and lease times when a lock is made; one probe finds a bad prefix or a
      // lease within the clock-drift allowance here rather than at the first obtain()
      String probe = namePrefix + "probe";
      if (fair) {
        client.fairLock(probe, resolvedOptions);
      } else {
        client.lock(probe, resolvedOptions);
      }
      return this;
    }
  }

  /**
   * The registry's {@link LocksmithLock}: Locksmith's thread-owned, re-entrant {@link DistributedLock} view, with
   * the exceptions Spring's registries throw, and what {@link #expireUnusedOlderThan} needs to know.
   */
  final class RegistryLock implements LocksmithLock {
    final String key;
    final DistributedLock delegate;
    /** The lease each thread of this process holds through this object; lets expiry skip held locks. */
    private final ConcurrentMap<Thread, Lease> holders = new ConcurrentHashMap<>();
    /** The options each holding thread's lease was taken with (a {@code ttl} lease's differ from the registry's). */
    private final ConcurrentMap<Thread, LockOptions> heldOptions = new ConcurrentHashMap<>();
    private final java.util.concurrent.atomic.AtomicInteger waiting = new java.util.concurrent.atomic.AtomicInteger();
    private volatile long lastUsedNanos = System.nanoTime();

    RegistryLock(String key, DistributedLock delegate) {
      this.key = key;
      this.delegate = delegate;
    }

    /** @return the options of the calling thread's hold through this object, or null if it has none */
    LockOptions heldOptions() {
      return heldOptions.get(Thread.currentThread());
    }

    boolean idleFor(long nanos, long now) {
      return waiting.get() == 0 && holders.isEmpty() && now - lastUsedNanos >= nanos;
    }

    @Override
    public void lock() {
      waiting.incrementAndGet();
      try {
        delegate.lock();
        held();
      } finally {
        waiting.decrementAndGet();
      }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
      waiting.incrementAndGet();
      try {
        delegate.lockInterruptibly();
        held();
      } finally {
        waiting.decrementAndGet();
      }
    }

    @Override
    public boolean tryLock() {
      waiting.incrementAndGet();
      try {
        return delegate.tryLock() && held();
      } finally {
        waiting.decrementAndGet();
      }
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
      Objects.requireNonNull(unit, "unit");
      waiting.incrementAndGet();
      try {
        // Lock's contract: a time of zero or less does not wait (Locksmith's own view rejects negatives)
        return delegate.tryLock(Math.max(0, time), unit) && held();
      } finally {
        waiting.decrementAndGet();
      }
    }

    @Override
    public void lock(Duration ttl) {
      LockOptions options = ttlOptions(ttl);
      waiting.incrementAndGet();
      try {
        newDelegate(key, options).lock();
        held(options);
      } finally {
        waiting.decrementAndGet();
      }
    }

    @Override
    public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
      Objects.requireNonNull(waitTime, "waitTime");
      LockOptions options = ttlOptions(ttl);
      waiting.incrementAndGet();
      try {
        long nanos = waitTime.isNegative() ? 0 : saturatedNanos(waitTime);
        return newDelegate(key, options).tryLock(nanos, TimeUnit.NANOSECONDS) && held(options);
      } finally {
        waiting.decrementAndGet();
      }
    }

    /** A fixed lease of {@code ttl}: Spring's ttl locks expire unless renewed. Checked against the client's bounds. */
    private LockOptions ttlOptions(Duration ttl) {
      LockOptions options = LockOptions.fixed(Objects.requireNonNull(ttl, "ttl"));
      newDelegate(key, options); // the client checks the lease against its clock-drift allowance
      return options;
    }

    private static long saturatedNanos(Duration d) {
      try {
        return d.toNanos();
      } catch (ArithmeticException e) {
        return Long.MAX_VALUE;
      }
    }

    private boolean held() {
      return held(lockOptions);
    }

    /**
     * The calling thread holds the lock now: note it, and watch a new lease for its loss. A re-entry keeps
     * the options the first hold was taken with.
     */
    private boolean held(LockOptions options) {
      lastUsedNanos = System.nanoTime();
      Lease lease = delegate.currentThreadLease().orElseThrow(); // just granted to this thread
      Lease before = holders.put(Thread.currentThread(), lease);
      if (before != lease) {
        heldOptions.put(Thread.currentThread(), options);
      }
      if (before != lease && lossListener != null && watchedLeases.add(lease)) {
        lease.onLost(() -> {
          watchedLeases.remove(lease);
          lost(key, lease);
        });
      }
      return true;
    }

    @Override
    public void unlock() {
      Thread me = Thread.currentThread();
      if (delegate.currentThreadLease().isEmpty()) {
        throw new IllegalStateException("lock '" + key + "' is not held by thread " + me.getName());
      }
      try {
        delegate.unlock();
      } catch (LeaseLostException e) {
        ConcurrentModificationException cme = new ConcurrentModificationException("lock '" + key
            + "' was lost while thread " + me.getName() + " held it: the integrity of data protected by it"
            + " may have been compromised (fence writes with the lease's fencing token)");
        cme.initCause(e);
        throw cme;
      } catch (IllegalMonitorStateException e) {
        // the hold ended between the check above and the unlock (the client was closed)
        throw new IllegalStateException("lock '" + key + "' is not held by thread " + me.getName(), e);
      } finally {
        if (delegate.currentThreadLease().isEmpty()) {
          Lease ended = holders.remove(me);
          heldOptions.remove(me);
          if (ended != null) {
            watchedLeases.remove(ended);
          }
          lastUsedNanos = System.nanoTime();
        }
      }
    }

    /**
     * Not supported: a distributed lock has no distributed condition variables.
     *
     * @throws UnsupportedOperationException always
     */
    @Override
    public java.util.concurrent.locks.Condition newCondition() {
      throw new UnsupportedOperationException("conditions are not supported by distributed locks");
    }

    @Override
    public String toString() {
      return "LocksmithLockRegistry.Lock['" + key + "', " + (delegate.isHeldByCurrentThread()
          ? "held by the calling thread" : "not held by the calling thread") + "]";
    }
  }
}
