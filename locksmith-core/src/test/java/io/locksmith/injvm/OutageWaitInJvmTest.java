package io.locksmith.injvm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.locksmith.AcquireTimeoutException;
import io.locksmith.BackendUnavailableException;
import io.locksmith.ClientOptions;
import io.locksmith.DistributedLock;
import io.locksmith.Lease;
import io.locksmith.LockClient;
import io.locksmith.LockInfo;
import io.locksmith.LockOptions;
import io.locksmith.internal.DefaultLockClient;
import io.locksmith.spi.AcquireMode;
import io.locksmith.spi.AcquireReply;
import io.locksmith.testkit.LogCapture;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Waiting across an outage (issue 13 item 2), on the in-JVM server's outage switch and with an
 * exclusive lock whose answers can be made to go missing after the server applied them (what a hung
 * Redis does to a command that times out). The Redis counterpart with real kills and pauses is
 * {@code io.locksmith.redis.OutageWaitTest}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class OutageWaitInJvmTest {
  private static final LockOptions LONG = LockOptions.fixed(Duration.ofSeconds(30));

  /**
   * The in-JVM backend with its exclusive lock's acquire attempts recorded (time, outcome), and the
   * answers of the next {@code swallow} attempts dropped after the server applied them.
   */
  private static final class ObservedBackend extends ForwardingBackend {
    final List<Long> failedAt = new CopyOnWriteArrayList<>();
    final AtomicInteger attempts = new AtomicInteger();
    final AtomicInteger swallow = new AtomicInteger();
    volatile CountDownLatch failures = new CountDownLatch(0);

    ObservedBackend(InJvmBackend target) {
      super(target);
    }

    /** @return a latch that opens after {@code n} more failed attempts */
    CountDownLatch awaitFailures(int n) {
      CountDownLatch latch = new CountDownLatch(n);
      failures = latch;
      return latch;
    }

    @Override
    public CompletionStage<AcquireReply> acquire(String name, String owner, long leaseMillis, AcquireMode mode,
        String waiterId) {
      attempts.incrementAndGet();
      CompletionStage<AcquireReply> reply = target.acquire(name, owner, leaseMillis, mode, waiterId);
      if (swallow.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
        // applied on the server, but the caller hears nothing back: a command timeout on a hung server
        reply = reply.handle((r, f) -> null).thenCompose(r -> CompletableFuture.failedFuture(
            new BackendUnavailableException("simulated: no answer within the command timeout")));
      }
      return reply.whenComplete((r, f) -> {
        if (f != null) {
          failedAt.add(System.nanoTime());
          failures.countDown();
        }
      });
    }

  }

  private final InJvmLockServer server = new InJvmLockServer();

  private LockClient observed(ObservedBackend backend) {
    return new DefaultLockClient(backend, ClientOptions.defaults());
  }

  /**
   * Regression: a waiting acquisition failed with the first attempt that hit the outage. It now keeps
   * trying, with a backoff that grows (no busy spin), and is granted once the server is back.
   */
  @Test
  void aWaitRidesOutAnOutageWithBackoffAndIsGrantedWhenItEnds() throws Exception {
    ObservedBackend backend = new ObservedBackend(new InJvmBackend(server));
    try (LockClient client = observed(backend); LockClient other = server.newClient()) {
      server.setReachable(false);
      CountDownLatch fourFailures = backend.awaitFailures(4);
      CompletableFuture<Lease> waiting = client.lock("ride-out", LONG).acquireAsync(Duration.ofSeconds(30))
          .toCompletableFuture();
      assertThat(fourFailures.await(10, TimeUnit.SECONDS))
          .as("four failed attempts while the wait went on (it ended with: %s)", waiting).isTrue();
      assertThat(waiting).as("still waiting during the outage").isNotDone();
      // retry delays: 12-25 ms, 25-50 ms, 50-100 ms (jittered in the upper half of each step)
      long spread = backend.failedAt.get(3) - backend.failedAt.get(0);
      assertThat(Duration.ofNanos(spread)).as("three backoff delays").isGreaterThanOrEqualTo(Duration.ofMillis(85));
      server.setReachable(true);

      Lease lease = waiting.get(10, TimeUnit.SECONDS);
      assertThat(lease.isHeld()).isTrue();
      assertThat(other.inspect("ride-out").map(LockInfo::waiters)).as("no waiter left registered")
          .hasValue(0);
      assertThat(lease.release()).isTrue();
    }
  }

  /** Regression: {@code Lock.lock()} failed on an outage; it waits as {@code Lock} promises. */
  @Test
  void lockWaitsAcrossAnOutage() throws Exception {
    ObservedBackend backend = new ObservedBackend(new InJvmBackend(server));
    try (LockClient client = observed(backend)) {
      DistributedLock lock = client.lock("lock-view", LONG);
      server.setReachable(false);
      CountDownLatch threeFailures = backend.awaitFailures(3);
      AtomicReference<Throwable> failed = new AtomicReference<>();
      CountDownLatch locked = new CountDownLatch(1);
      Thread t = new Thread(() -> {
        try {
          lock.lock();
          try {
            locked.countDown();
          } finally {
            lock.unlock();
          }
        } catch (Throwable e) {
          failed.set(e);
        }
      }, "lock-across-outage");
      t.start();
      assertThat(threeFailures.await(10, TimeUnit.SECONDS)).as("lock() kept trying (it failed with: %s)",
          failed.get()).isTrue();
      server.setReachable(true);
      assertThat(locked.await(10, TimeUnit.SECONDS)).as("locked after the outage (failed with: %s)", failed.get())
          .isTrue();
      t.join(10_000);
      assertThat(failed.get()).isNull();
    }
  }

  /**
   * Regression: a wait whose attempts all failed ended at once with the first failure. It now fails at
   * its end, with a {@link BackendUnavailableException} that names the wait and carries the last
   * failure; {@code tryAcquire(wait)} too, since an outage is not a "no" from the lock.
   */
  @Test
  void aWaitThatEndsDuringTheOutageFailsWithTheOutageNotATimeout() throws Exception {
    ObservedBackend backend = new ObservedBackend(new InJvmBackend(server));
    try (LockClient client = observed(backend)) {
      server.setReachable(false);
      DistributedLock lock = client.lock("ends-in-outage", LONG);
      long start = System.nanoTime();
      BackendUnavailableException e = catchThrowableOfType(() -> lock.acquire(Duration.ofMillis(300)),
          BackendUnavailableException.class);
      assertThat(e).isExactlyInstanceOf(BackendUnavailableException.class)
          .hasMessageStartingWith("lock 'ends-in-outage' was not acquired within 300 ms: the backend could not be"
              + " reached (")
          .hasMessageEndingWith("attempts; the last: in-JVM lock server is unreachable (simulated): could not"
              + " acquire)")
          .hasCauseInstanceOf(BackendUnavailableException.class);
      // issue 25 item 9: the message named the lock twice (and the trace a third time); now once, the cause
      // chain keeps the last attempt's full message
      assertThat(e.getMessage().split("ends-in-outage", -1)).as(e.getMessage()).hasSize(2);
      assertThat(Duration.ofNanos(System.nanoTime() - start)).as("it used its wait")
          .isGreaterThanOrEqualTo(Duration.ofMillis(300));
      // At least two: the wait retried rather than ending with its first failure. With backoffs of 12-25,
      // 25-50 and 50-100 ms a third attempt is usual, but one timer stall of ~250 ms on a loaded machine
      // leaves only two. At most 15: no busy retry loop.
      assertThat(backend.attempts.get()).as("attempts within 300 ms").isBetween(2, 15);

      // the other forms of a wait: any length shows what they end with, 100 ms keeps the case short
      assertThatThrownBy(() -> lock.tryAcquire(Duration.ofMillis(100)))
          .isExactlyInstanceOf(BackendUnavailableException.class).hasMessageContaining("within 100 ms");
      assertThatThrownBy(() -> lock.tryLock(100, TimeUnit.MILLISECONDS))
          .isExactlyInstanceOf(BackendUnavailableException.class);
      CompletableFuture<Lease> async = lock.acquireAsync(Duration.ofMillis(100)).toCompletableFuture();
      assertThatThrownBy(() -> async.get(5, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
          .hasCauseExactlyInstanceOf(BackendUnavailableException.class);
    }
  }

  /** A lock that is simply busy when the wait ends is a timeout, even if the wait began in an outage. */
  @Test
  void aLockStillBusyAfterTheOutageIsATimeoutResult() throws Exception {
    ObservedBackend backend = new ObservedBackend(new InJvmBackend(server));
    try (LockClient client = observed(backend); LockClient holder = server.newClient()) {
      Lease held = holder.lock("busy-after", LONG).acquire();
      server.setReachable(false);
      CountDownLatch twoFailures = backend.awaitFailures(2);
      CompletableFuture<Optional<Lease>> trying = client.lock("busy-after", LONG)
          .tryAcquireAsync(Duration.ofMillis(1500)).toCompletableFuture();
      CompletableFuture<Lease> acquiring = client.lock("busy-after", LONG)
          .acquireAsync(Duration.ofMillis(1500)).toCompletableFuture();
      assertThat(twoFailures.await(10, TimeUnit.SECONDS)).as("attempts failed during the outage").isTrue();
      server.setReachable(true);
      assertThat(trying.get(10, TimeUnit.SECONDS)).as("not acquired: a result").isEmpty();
      assertThatThrownBy(() -> acquiring.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(AcquireTimeoutException.class);
      // the waiter leaves the queue right after its last round, which may be just after the call returned
      assertThat(LogCapture.eventually(Duration.ofSeconds(5),
          () -> holder.inspect("busy-after").map(LockInfo::waiters).equals(Optional.of(0))))
          .as("no waiter left registered").isTrue();
      held.release();
    }
  }

  /** Calls that do not wait try once and fail at once: no retry. */
  @Test
  void callsThatDoNotWaitFailFastAfterOneAttempt() {
    ObservedBackend backend = new ObservedBackend(new InJvmBackend(server));
    try (LockClient client = observed(backend)) {
      server.setReachable(false);
      DistributedLock lock = client.lock("no-wait", LONG);
      assertThatThrownBy(lock::tryAcquire).isInstanceOf(BackendUnavailableException.class);
      assertThatThrownBy(lock::tryLock).isInstanceOf(BackendUnavailableException.class);
      assertThatThrownBy(() -> lock.acquire(Duration.ZERO)).isInstanceOf(BackendUnavailableException.class);
      assertThat(backend.attempts.get()).isEqualTo(3);
    }
  }

  /**
   * Regression: an attempt the server applied but whose answer never came ("phantom holder") kept the
   * lock for its whole 30 s lease, even against the same client. It is given back once the backend
   * answers, so another client gets the lock at once.
   */
  @Test
  void anUnansweredGrantOfACallerThatGaveUpIsGivenBack() throws Exception {
    ObservedBackend backend = new ObservedBackend(new InJvmBackend(server));
    try (LockClient client = observed(backend); LockClient other = server.newClient()) {
      backend.swallow.set(1);
      assertThatThrownBy(() -> client.lock("phantom", LONG).tryAcquire())
          .isInstanceOf(BackendUnavailableException.class);
      Optional<Lease> next = other.lock("phantom", LONG).tryAcquire();
      assertThat(next).as("the phantom grant was given back (holder: %s)", other.inspect("phantom")).isPresent();
      next.get().release();

      // the same when a wait ends (cancelled) after its attempt went unanswered
      backend.swallow.set(1);
      CountDownLatch failed = backend.awaitFailures(1);
      CompletableFuture<Lease> waiting = client.lock("phantom", LONG).acquireAsync(Duration.ofSeconds(30))
          .toCompletableFuture();
      assertThat(failed.await(10, TimeUnit.SECONDS)).isTrue();
      waiting.cancel(false);
      next = other.lock("phantom", LONG).tryAcquire(Duration.ofSeconds(5));
      assertThat(next).as("given back after the cancelled wait").isPresent();
      next.get().release();
    }
  }

  /**
   * Regression: a retried attempt of the same acquisition finds the grant its unanswered first attempt
   * took. It becomes the lease, with one hold and the token the server holds, so that one release (or
   * one unlock) frees the lock.
   */
  @Test
  void aRetryAdoptsItsOwnUnansweredGrantWithOneHoldAndTheServersToken() throws Exception {
    ObservedBackend backend = new ObservedBackend(new InJvmBackend(server));
    try (LockClient client = observed(backend); LockClient other = server.newClient()) {
      backend.swallow.set(1);
      Lease lease = client.lock("adopt", LONG).acquire(Duration.ofSeconds(10));
      assertThat(backend.attempts.get()).as("the first attempt went unanswered, the second was granted")
          .isEqualTo(2);
      LockInfo info = other.inspect("adopt").orElseThrow();
      assertThat(info.owner()).startsWith(client.clientId() + ":");
      assertThat(info.holdCount()).isEqualTo(1);
      assertThat(info.fencingToken()).isEqualTo(lease.fencingToken());
      assertThat(lease.release()).isTrue();
      assertThat(other.inspect("adopt")).as("one release frees it").isEmpty();

      backend.swallow.set(1);
      DistributedLock lock = client.lock("adopt", LONG);
      lock.lock();
      assertThat(lock.getHoldCount()).isEqualTo(1);
      assertThat(other.inspect("adopt").map(LockInfo::holdCount)).hasValue(1);
      lock.unlock();
      assertThat(other.inspect("adopt")).as("one unlock frees it").isEmpty();
    }
  }
}
