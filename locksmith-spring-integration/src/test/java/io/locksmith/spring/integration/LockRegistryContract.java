package io.locksmith.spring.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.Deque;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/**
 * What a Spring Integration {@code LockRegistry} is expected to do, checked against one implementation
 * on one backend: Locksmith's registry on each backend, and Spring's own {@code RedisLockRegistry} and
 * {@code JdbcLockRegistry} as controls. The behaviours are those Spring Integration's own registry tests
 * exercise (same lock object per key, mutual exclusion across threads and registries, bounded {@code
 * tryLock}, re-entrancy, expiry of unused lock objects, renewal, unlocking a lock that expired or that
 * another thread holds, {@code executeLocked}); the tests are this project's.
 *
 * <p>A subclass gives registries; two registries are two owners, as two processes are (two clients, or
 * two Spring registries with their own client ids). Where an implementation differs by design, an
 * expectation hook says so, and {@code docs/adapters.md} tabulates the differences.
 *
 * <p>Synchronisation is by latches; only the tests whose subject is time (a lease running out, idle
 * time before expiry) sleep, and then for the time under test.
 *
 * <p>The cases run side by side (junit-platform.properties bounds how many): each has its own keys and
 * registries, and the lease cases spend their time waiting for a lease, which need not be done in a row.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
abstract class LockRegistryContract {
  /** A wait long enough that reaching it means something hangs. */
  static final long LONG_WAIT_SECONDS = 10;
  /** The lease of the registries whose locks must expire during a test. */
  static final Duration SHORT_TTL = Duration.ofMillis(1000);
  /**
   * The lease of the renewal case: renewed at half of it, checked 100 ms after it, so that a check and an
   * unlock have some 900 ms before the renewed lease ends, on a loaded machine too.
   */
  static final Duration RENEWED_TTL = Duration.ofMillis(2000);

  private final Deque<AutoCloseable> resources = new ArrayDeque<>();
  private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "contract-" + UUID.randomUUID().toString().substring(0, 4));
    t.setDaemon(true);
    return t;
  });

  /**
   * @param ttl how long a lock lasts unless unlocked or renewed; null for the implementation's default
   *     (long enough for any test)
   * @return a new registry, an owner of its own; the subclass closes it via {@link #closeAfter}
   */
  abstract RenewableLockRegistry newRegistry(Duration ttl);

  // ---------------------------------------------------------------- expectation hooks

  /** @return what {@code unlock()} throws when the calling thread does not hold the lock */
  Class<? extends RuntimeException> notOwnerUnlockException() {
    return IllegalStateException.class;
  }

  /**
   * @return whether {@code renewLock} refuses a thread that does not hold the lock while another thread of
   *     the same registry does (Spring's Redis registry renews for any thread of the registry)
   */
  boolean renewRequiresHoldingThread() {
    return true;
  }

  /** @return what {@code renewLock} throws when the calling thread does not hold the lock */
  Class<? extends RuntimeException> renewNotHeldException() {
    return IllegalStateException.class;
  }

  /**
   * @return whether {@code unlock()} of a lock whose lease ran out, though nobody took the lock since,
   *     throws {@link ConcurrentModificationException} (a JDBC row that expired stays until someone else
   *     claims it, so Spring's JDBC registry still finds it its own)
   */
  boolean expiredUnclaimedUnlockThrows() {
    return true;
  }

  /**
   * @return whether a lock expires after the lease its holder took it with, whoever contends for it (in
   *     Spring's JDBC registry the contender's {@code timeToLive} decides, when it claims the row)
   */
  boolean expiryJudgedByTheHoldersLease() {
    return true;
  }

  /**
   * @return what {@code lockInterruptibly()} throws instead of {@link InterruptedException} when the
   *     interrupt lands in a call to the backend rather than in the wait between calls, or null if it never
   *     does (Spring's Redis registry: Lettuce fails the command, and the registry wraps that in its
   *     {@code CannotAcquireLockException})
   */
  Class<? extends RuntimeException> interruptedBackendCallException() {
    return null;
  }

  // ---------------------------------------------------------------- helpers

  static List<Throwable> causes(Throwable t) {
    List<Throwable> chain = new ArrayList<>();
    for (Throwable c = t; c != null && !chain.contains(c); c = c.getCause()) {
      chain.add(c);
    }
    return chain;
  }

  final <T extends AutoCloseable> T closeAfter(T resource) {
    resources.push(resource);
    return resource;
  }

  @AfterEach
  final void closeResources() throws Exception {
    threads.shutdownNow();
    Exception first = null;
    while (!resources.isEmpty()) {
      try {
        resources.pop().close();
      } catch (Exception e) {
        first = first == null ? e : first;
      }
    }
    if (first != null) {
      throw first;
    }
  }

  static String key() {
    return "si-" + UUID.randomUUID();
  }

  RenewableLockRegistry registry() {
    return newRegistry(null);
  }

  /** Runs {@code task} on another thread. */
  <T> Future<T> onOtherThread(Callable<T> task) {
    return threads.submit(task);
  }

  static <T> T get(Future<T> f) throws Exception {
    return f.get(LONG_WAIT_SECONDS, TimeUnit.SECONDS);
  }

  /** A thread that holds a lock until told to let go; lock and unlock happen on that thread. */
  final class Holder implements AutoCloseable {
    private final CountDownLatch locked = new CountDownLatch(1);
    private final CountDownLatch release = new CountDownLatch(1);
    private final Future<Void> done;

    Holder(Lock lock) throws Exception {
      done = onOtherThread(() -> {
        lock.lock();
        locked.countDown();
        try {
          release.await();
        } finally {
          lock.unlock();
        }
        return null;
      });
      assertThat(locked.await(LONG_WAIT_SECONDS, TimeUnit.SECONDS)).as("holder locked").isTrue();
    }

    /** Unlocks on the holder's thread and waits for it. */
    void release() throws Exception {
      release.countDown();
      get(done);
    }

    @Override
    public void close() {
      release.countDown();
    }
  }

  /** @return whether another owner could take the lock of {@code key} right now (taken back at once) */
  boolean freeFor(RenewableLockRegistry other, String key) throws Exception {
    return get(onOtherThread(() -> {
      Lock lock = other.obtain(key);
      if (lock.tryLock()) {
        lock.unlock();
        return true;
      }
      return false;
    }));
  }

  /** Polls {@link #freeFor} until the lock is free or {@code bound} has passed. */
  boolean freeWithin(RenewableLockRegistry other, String key, Duration bound) throws Exception {
    long deadline = System.nanoTime() + bound.toNanos();
    while (!freeFor(other, key)) {
      if (System.nanoTime() - deadline > 0) {
        return false;
      }
      Thread.sleep(20); // polling the backend's state, not waiting for a thread
    }
    return true;
  }

  // ---------------------------------------------------------------- obtain

  @Test
  void obtainGivesTheSameLockForTheSameKey() {
    RenewableLockRegistry registry = registry();
    String key = key();
    Lock lock = registry.obtain(key);
    assertThat(registry.obtain(key)).isSameAs(lock);
    assertThat(registry.obtain(key())).isNotSameAs(lock);
  }

  @Test
  void obtainRejectsKeysThatAreNotStrings() {
    RenewableLockRegistry registry = registry();
    assertThatThrownBy(() -> registry.obtain(42)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> registry.obtain(null)).isInstanceOf(IllegalArgumentException.class);
  }

  // ---------------------------------------------------------------- exclusion

  @Test
  void aHeldLockExcludesAnotherRegistryUntilUnlocked() throws Exception {
    RenewableLockRegistry one = registry();
    RenewableLockRegistry two = registry();
    String key = key();
    Lock lock = one.obtain(key);
    lock.lock();
    try {
      assertThat(freeFor(two, key)).as("free for the other registry while held").isFalse();
      assertThat(two.obtain(key).tryLock()).as("same thread, other registry").isFalse();
    } finally {
      lock.unlock();
    }
    assertThat(freeFor(two, key)).as("free after unlock").isTrue();
  }

  @Test
  void aHeldLockExcludesOtherThreadsOfTheSameRegistry() throws Exception {
    RenewableLockRegistry registry = registry();
    String key = key();
    try (Holder holder = new Holder(registry.obtain(key))) {
      assertThat(freeFor(registry, key)).isFalse();
      holder.release();
    }
    assertThat(freeFor(registry, key)).isTrue();
  }

  @Test
  void lockWaitsUntilTheHolderUnlocks() throws Exception {
    RenewableLockRegistry one = registry();
    RenewableLockRegistry two = registry();
    String key = key();
    Holder holder = new Holder(one.obtain(key));
    CountDownLatch starting = new CountDownLatch(1);
    AtomicInteger acquiredWhileHeld = new AtomicInteger();
    CountDownLatch released = new CountDownLatch(1);
    Future<Boolean> waiter = onOtherThread(() -> {
      Lock lock = two.obtain(key);
      starting.countDown();
      lock.lock();
      try {
        if (released.getCount() > 0) {
          acquiredWhileHeld.incrementAndGet();
        }
        return true;
      } finally {
        lock.unlock();
      }
    });
    assertThat(starting.await(LONG_WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
    assertThat(waiter.isDone()).isFalse();
    released.countDown(); // before the release: a grant seen before this would be a grant while held
    holder.release();
    assertThat(get(waiter)).isTrue();
    assertThat(acquiredWhileHeld).hasValue(0);
  }

  @Test
  void threadsOfTwoRegistriesNeverOverlap() throws Exception {
    List<RenewableLockRegistry> registries = List.of(registry(), registry());
    String key = key();
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger overlaps = new AtomicInteger();
    AtomicInteger entries = new AtomicInteger();
    CountDownLatch go = new CountDownLatch(1);
    List<Future<Void>> workers = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      RenewableLockRegistry registry = registries.get(t % 2);
      workers.add(onOtherThread(() -> {
        go.await();
        for (int i = 0; i < 4; i++) {
          Lock lock = registry.obtain(key);
          lock.lock();
          try {
            if (inside.incrementAndGet() != 1) {
              overlaps.incrementAndGet();
            }
            entries.incrementAndGet();
            inside.decrementAndGet();
          } finally {
            lock.unlock();
          }
        }
        return null;
      }));
    }
    go.countDown();
    for (Future<Void> w : workers) {
      w.get(25, TimeUnit.SECONDS);
    }
    assertThat(entries).hasValue(16);
    assertThat(overlaps).hasValue(0);
  }

  // ---------------------------------------------------------------- tryLock

  @Test
  void tryLockGivesUpAfterItsWait() throws Exception {
    RenewableLockRegistry one = registry();
    RenewableLockRegistry two = registry();
    String key = key();
    try (Holder holder = new Holder(one.obtain(key))) {
      Lock lock = two.obtain(key);
      assertThat(lock.tryLock()).isFalse();
      long start = System.nanoTime();
      assertThat(lock.tryLock(300, TimeUnit.MILLISECONDS)).isFalse();
      long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      // real time is the subject (tryLock's wait): 300 ms asked for, less 20 ms for timer and clock
      // granularity = 280 ms; 300 ms + 2.7 s allowance for a loaded machine = 3 s (catches a wait ignored)
      assertThat(waitedMs).as("waited about the wait").isBetween(280L, 3000L);
      holder.release();
    }
  }

  @Test
  void tryLockSucceedsWhenTheLockIsReleasedDuringTheWait() throws Exception {
    RenewableLockRegistry one = registry();
    RenewableLockRegistry two = registry();
    String key = key();
    Holder holder = new Holder(one.obtain(key));
    CountDownLatch waiting = new CountDownLatch(1);
    Future<Long> waiter = onOtherThread(() -> {
      Lock lock = two.obtain(key);
      long start = System.nanoTime();
      waiting.countDown();
      boolean got = lock.tryLock(LONG_WAIT_SECONDS, TimeUnit.SECONDS);
      long took = System.nanoTime() - start;
      if (got) {
        lock.unlock();
      }
      return got ? took : -1;
    });
    assertThat(waiting.await(LONG_WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
    holder.release();
    long took = get(waiter);
    assertThat(took).as("acquired before the wait ran out").isPositive()
        .isLessThan(TimeUnit.SECONDS.toNanos(LONG_WAIT_SECONDS));
  }

  @Test
  void tryLockWithANegativeWaitTriesOnce() throws Exception {
    Lock lock = registry().obtain(key());
    assertThat(lock.tryLock(-1, TimeUnit.MILLISECONDS)).isTrue();
    lock.unlock();
  }

  @Test
  void lockInterruptiblyEndsWhenInterrupted() throws Exception {
    RenewableLockRegistry one = registry();
    RenewableLockRegistry two = registry();
    String key = key();
    try (Holder holder = new Holder(one.obtain(key))) {
      CountDownLatch started = new CountDownLatch(1);
      CountDownLatch ended = new CountDownLatch(1);
      AtomicReference<Throwable> thrown = new AtomicReference<>();
      Thread waiter = new Thread(() -> {
        started.countDown();
        thrown.set(catchThrowable(() -> two.obtain(key).lockInterruptibly()));
        ended.countDown();
      }, "contract-interrupted");
      waiter.setDaemon(true);
      waiter.start();
      assertThat(started.await(LONG_WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
      waiter.interrupt(); // before or during the wait: either way it must end the call
      assertThat(ended.await(LONG_WAIT_SECONDS, TimeUnit.SECONDS)).as("the interrupt ended the wait").isTrue();
      Throwable t = thrown.get();
      if (!(t instanceof InterruptedException)) {
        // an interrupt that lands in the implementation's call to its backend, not in its wait
        assertThat(interruptedBackendCallException()).as("%s instead of InterruptedException", t).isNotNull();
        assertThat(t).isInstanceOf(interruptedBackendCallException());
        assertThat(causes(t)).as("caused by the interrupt: %s", causes(t))
            .anyMatch(c -> c.getClass().getSimpleName().contains("Interrupted"));
      }
      holder.release();
    }
    // a waiter that gave up leaves nothing behind, though its clean-up may land a moment after the
    // holder's release (ZooKeeper deletes its node asynchronously; CI once found it still queued): free
    // within a few seconds, where a waiter that had taken the lock would keep it for its whole lease
    assertThat(freeWithin(two, key, Duration.ofSeconds(5))).as("the interrupted waiter took nothing").isTrue();
  }

  @Test
  void newConditionIsNotSupported() {
    Lock lock = registry().obtain(key());
    assertThatThrownBy(lock::newCondition).isInstanceOf(UnsupportedOperationException.class);
  }

  // ---------------------------------------------------------------- re-entrancy and unlock

  @Test
  void locksAreReentrantPerThread() throws Exception {
    RenewableLockRegistry one = registry();
    RenewableLockRegistry two = registry();
    String key = key();
    Lock lock = one.obtain(key);
    lock.lock();
    assertThat(lock.tryLock()).isTrue();
    assertThat(lock.tryLock(1, TimeUnit.SECONDS)).isTrue();
    lock.unlock();
    lock.unlock();
    assertThat(freeFor(two, key)).as("held while one hold is left").isFalse();
    lock.unlock();
    assertThat(freeFor(two, key)).as("free after as many unlocks as locks").isTrue();
  }

  @Test
  void unlockByAThreadThatDoesNotHoldTheLockThrows() throws Exception {
    RenewableLockRegistry one = registry();
    RenewableLockRegistry two = registry();
    String key = key();
    Lock lock = one.obtain(key);
    assertThatThrownBy(lock::unlock).as("never locked").isInstanceOf(notOwnerUnlockException());
    try (Holder holder = new Holder(lock)) {
      assertThatThrownBy(lock::unlock).as("held by another thread").isInstanceOf(notOwnerUnlockException());
      assertThat(freeFor(two, key)).as("still held by its holder").isFalse();
      holder.release();
    }
  }

  // ---------------------------------------------------------------- expiry of lock objects

  @Test
  void expireUnusedOlderThanDropsOnlyIdleLockObjects() throws Exception {
    ExpirableLockRegistry registry = (ExpirableLockRegistry) registry();
    String idle = key();
    String held = key();
    Lock idleLock = registry.obtain(idle);
    idleLock.lock();
    idleLock.unlock();
    Lock heldLock = registry.obtain(held);
    heldLock.lock();
    try {
      registry.expireUnusedOlderThan(TimeUnit.MINUTES.toMillis(1));
      assertThat(registry.obtain(idle)).as("used within the age").isSameAs(idleLock);
      Thread.sleep(150); // the subject is idle time
      registry.expireUnusedOlderThan(100);
      assertThat(registry.obtain(idle)).as("idle for longer than the age").isNotSameAs(idleLock);
      assertThat(registry.obtain(held)).as("held").isSameAs(heldLock);
    } finally {
      heldLock.unlock();
    }
  }

  // ---------------------------------------------------------------- leases: expiry and renewal

  @Test
  void unlockingALockThatExpiredAndWasTakenThrowsAndLetsGo() throws Exception {
    RenewableLockRegistry shortLived = newRegistry(SHORT_TTL);
    RenewableLockRegistry other = newRegistry(SHORT_TTL);
    String key = key();
    Lock lock = shortLived.obtain(key);
    lock.lock();
    // the other owner waits for the lease to run out
    Holder taker = new Holder(other.obtain(key));
    assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class);
    taker.release();
    assertThat(lock.tryLock()).as("the failed unlock dropped the local hold").isTrue();
    lock.unlock();
  }

  @Test
  void aLockExpiresByItsHoldersLease() throws Exception {
    RenewableLockRegistry shortLived = newRegistry(SHORT_TTL);
    RenewableLockRegistry longLived = registry();
    String key = key();
    Lock lock = shortLived.obtain(key);
    lock.lock();
    boolean taken = get(onOtherThread(() -> {
      Lock other = longLived.obtain(key);
      // the holder's lease 1 s + allowance 1 s for the contender's retries on a loaded machine = 2 s; where
      // the contender's own lease decides (Spring's JDBC registry), 2 s is still well inside it (10 s)
      if (other.tryLock(SHORT_TTL.toMillis() * 2, TimeUnit.MILLISECONDS)) {
        other.unlock();
        return true;
      }
      return false;
    }));
    if (expiryJudgedByTheHoldersLease()) {
      assertThat(taken).as("taken once the holder's lease ran out").isTrue();
      assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class);
    } else {
      assertThat(taken).as("the contender's longer lease still covers the holder").isFalse();
      lock.unlock();
    }
  }

  @Test
  void unlockingALockThatExpiredUnclaimed() throws Exception {
    RenewableLockRegistry shortLived = newRegistry(SHORT_TTL);
    RenewableLockRegistry other = registry();
    String key = key();
    Lock lock = shortLived.obtain(key);
    lock.lock();
    Thread.sleep(SHORT_TTL.toMillis() + 300); // the subject is the lease running out
    Throwable thrown = catchThrowable(lock::unlock);
    if (expiredUnclaimedUnlockThrows()) {
      assertThat(thrown).isInstanceOf(ConcurrentModificationException.class);
    } else {
      assertThat(thrown).isNull();
    }
    assertThat(freeFor(other, key)).isTrue();
    assertThat(lock.tryLock()).as("the local hold is gone").isTrue();
    lock.unlock();
  }

  @Test
  void renewLockKeepsTheLockPastItsLease() throws Exception {
    RenewableLockRegistry shortLived = newRegistry(RENEWED_TTL);
    RenewableLockRegistry other = newRegistry(RENEWED_TTL); // the same lease everywhere, as in production
    String key = key();
    Lock lock = shortLived.obtain(key);
    lock.lock();
    // deadlines from the grant, not sleeps in a row, so that a loaded machine does not add them up: the
    // first lease ends by locked + TTL at the latest, the renewed one not before renewing + TTL
    long locked = System.nanoTime();
    try {
      sleepUntil(locked + RENEWED_TTL.toNanos() / 2); // the subject is the lease's time
      shortLived.renewLock(key);
      sleepUntil(locked + RENEWED_TTL.toNanos() + TimeUnit.MILLISECONDS.toNanos(100)); // past the first lease
      assertThat(freeFor(other, key)).as("still held after the first lease").isFalse();
    } finally {
      lock.unlock(); // throws if the lease had been lost
    }
    assertThat(freeFor(other, key)).isTrue();
  }

  private static void sleepUntil(long deadlineNanos) throws InterruptedException {
    long left = deadlineNanos - System.nanoTime();
    if (left > 0) {
      TimeUnit.NANOSECONDS.sleep(left);
    }
  }

  @Test
  void renewLockOfALockTheThreadDoesNotHoldThrows() throws Exception {
    RenewableLockRegistry registry = registry();
    String key = key();
    registry.obtain(key);
    assertThatThrownBy(() -> registry.renewLock(key)).as("held by nobody").isInstanceOf(renewNotHeldException());
    try (Holder holder = new Holder(registry.obtain(key))) {
      Throwable thrown = catchThrowable(() -> registry.renewLock(key));
      if (renewRequiresHoldingThread()) {
        assertThat(thrown).as("held by another thread").isInstanceOf(renewNotHeldException());
      } else {
        assertThat(thrown).as("held by another thread of the registry").isNull();
      }
      holder.release();
    }
  }

  // ---------------------------------------------------------------- executeLocked

  @Test
  void executeLockedRunsTheTaskUnderTheLock() throws Throwable { // Throwable: the raw SI 7 registry erases E
    RenewableLockRegistry one = registry();
    RenewableLockRegistry two = registry();
    String key = key();
    List<Boolean> freeInside = new ArrayList<>();
    one.executeLocked(key, () -> {
      freeInside.add(freeFor(two, key));
    });
    assertThat(freeInside).containsExactly(false);
    Object value = one.executeLocked(key, () -> freeFor(two, key) ? "free" : "held");
    assertThat(value).isEqualTo("held");
    assertThat(freeFor(two, key)).as("unlocked after the task").isTrue();
  }

  @Test
  void executeLockedUnlocksWhenTheTaskThrows() throws Exception {
    RenewableLockRegistry one = registry();
    RenewableLockRegistry two = registry();
    String key = key();
    IllegalStateException boom = new IllegalStateException("boom");
    assertThatThrownBy(() -> one.executeLocked(key, () -> {
      throw boom;
    })).isSameAs(boom);
    assertThat(freeFor(two, key)).isTrue();
  }

  @Test
  void executeLockedWithAWaitTimesOutWhileTheLockIsHeld() throws Throwable {
    RenewableLockRegistry one = registry();
    RenewableLockRegistry two = registry();
    String key = key();
    AtomicInteger runs = new AtomicInteger();
    try (Holder holder = new Holder(one.obtain(key))) {
      assertThatThrownBy(() -> two.executeLocked(key, Duration.ofMillis(200), runs::incrementAndGet))
          .isInstanceOf(TimeoutException.class);
      assertThat(runs).as("the task did not run").hasValue(0);
      holder.release();
    }
    assertThat(two.executeLocked(key, Duration.ofSeconds(LONG_WAIT_SECONDS), runs::incrementAndGet)).isEqualTo(1);
    two.executeLocked(key, Duration.ofSeconds(LONG_WAIT_SECONDS), () -> {
      runs.incrementAndGet();
    });
    assertThat(runs).hasValue(2);
    assertThat(freeFor(one, key)).isTrue();
  }
}
