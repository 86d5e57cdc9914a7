package io.locksmith.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.LockClient;
import io.locksmith.injvm.InJvmLockServer;
import java.time.Clock;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/** What the adapter adds to ShedLock's contract: the running job's fencing token. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
@Execution(ExecutionMode.SAME_THREAD) // times lockAtLeastFor in real time: kept off the contract's load
class LocksmithLockProviderTest {

  private static LockConfiguration job(String name) {
    return new LockConfiguration(ClockProvider.now(), name, Duration.ofSeconds(10), Duration.ZERO);
  }

  @Test
  void aJobSeesItsFencingTokenWhileAnotherInstanceSkipsTheSameJob() throws Exception {
    InJvmLockServer server = new InJvmLockServer();
    try (LockClient a = server.newClient(); LockClient b = server.newClient();
        LocksmithLockProvider first = new LocksmithLockProvider(a);
        LocksmithLockProvider second = new LocksmithLockProvider(b)) {
      LockingTaskExecutor instanceA = new DefaultLockingTaskExecutor(first);
      LockingTaskExecutor instanceB = new DefaultLockingTaskExecutor(second);
      List<OptionalLong> tokens = new CopyOnWriteArrayList<>();
      CountDownLatch running = new CountDownLatch(1);
      CountDownLatch finish = new CountDownLatch(1);
      Thread tick = new Thread(() -> instanceA.executeWithLock((Runnable) () -> {
        tokens.add(LocksmithLockProvider.currentFencingToken());
        running.countDown();
        try {
          finish.await(20, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }, job("nightly-report")));
      tick.start();
      assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
      AtomicBoolean ranOnB = new AtomicBoolean();
      instanceB.executeWithLock((Runnable) () -> ranOnB.set(true), job("nightly-report"));
      assertThat(ranOnB).as("the other instance skips the job while it runs").isFalse();
      finish.countDown();
      tick.join(10_000);
      assertThat(tokens).hasSize(1);
      assertThat(tokens.get(0)).as("the job's fencing token").isPresent();
      assertThat(tokens.get(0).getAsLong()).isPositive();
      assertThat(LocksmithLockProvider.currentFencingToken()).as("outside a job").isEmpty();
      instanceB.executeWithLock((Runnable) () -> {
        ranOnB.set(true);
        tokens.add(LocksmithLockProvider.currentFencingToken());
      }, job("nightly-report"));
      assertThat(ranOnB).as("runs once the first run is over").isTrue();
      assertThat(tokens.get(1).getAsLong()).as("a later run's token is larger").isGreaterThan(tokens.get(0).getAsLong());
    }
  }

  /**
   * A job that ran on an instance which then shuts down stays locked until its lockAtLeastFor has passed:
   * closing the provider and its client must not free the lock early, or another instance runs the job
   * again in the same tick (CI saw exactly that when one of two Spring contexts closed: the client's
   * close released the lease that the adapter was keeping for lockAtLeastFor).
   */
  @Test
  void aLockKeptForLockAtLeastForOutlivesTheInstanceThatRanTheJob() throws Exception {
    InJvmLockServer server = new InJvmLockServer();
    Duration atLeast = Duration.ofMillis(1500);
    try (LockClient operator = server.newClient(); LockClient next = server.newClient();
        LocksmithLockProvider nextInstance = new LocksmithLockProvider(next)) {
      LockClient client = server.newClient();
      LocksmithLockProvider provider = new LocksmithLockProvider(client);
      long ranAt = System.nanoTime();
      SimpleLock lock = provider.lock(new LockConfiguration(ClockProvider.now(), "cleanup", Duration.ofSeconds(10),
          atLeast)).orElseThrow();
      lock.unlock(); // the job is done at once
      provider.close();
      client.close(); // the instance shuts down
      assertThat(nextInstance.lock(job("cleanup"))).as("the other instance skips it: lockAtLeastFor runs").isEmpty();
      assertThat(Duration.ofNanos(System.nanoTime() - ranAt)).as("checked within lockAtLeastFor").isLessThan(atLeast);
      assertThat(operator.lock("cleanup").tryAcquire(Duration.ofSeconds(10))).as("free once it has passed")
          .isPresent();
      assertThat(Duration.ofNanos(System.nanoTime() - ranAt)).as("and not before")
          .isGreaterThanOrEqualTo(atLeast.minusMillis(20));
    }
  }

  /**
   * An extend refused because lockAtMostFor has passed means the lock is free: ShedLock's clock and the
   * adapter's release timer are different clocks, so the refusal must not rely on the timer having run
   * (CI saw the lock still held 94 ms before its lease end right after such a refusal).
   */
  @Test
  void anExtendRefusedAsExpiredLeavesTheLockFree() {
    InJvmLockServer server = new InJvmLockServer();
    Clock wall = Clock.systemUTC();
    try (LockClient client = server.newClient(); LockClient operator = server.newClient();
        LocksmithLockProvider provider = new LocksmithLockProvider(client)) {
      ClockProvider.setClock(Clock.fixed(wall.instant(), ZoneOffset.UTC));
      Optional<SimpleLock> lock = provider.lock(job("expiring-job"));
      assertThat(lock).isPresent();
      // lockAtMostFor (10 s) has passed by ShedLock's clock, while the release timer has 10 s to go
      ClockProvider.setClock(Clock.fixed(wall.instant().plusSeconds(11), ZoneOffset.UTC));
      assertThat(lock.get().extend(Duration.ofSeconds(10), Duration.ZERO)).as("expired: cannot extend").isEmpty();
      assertThat(operator.inspect("expiring-job")).as("and is free at once").isEmpty();
      assertThat(LocksmithLockProvider.currentFencingToken()).as("no job runs under it any more").isEmpty();
    } finally {
      ClockProvider.setClock(wall);
    }
  }
  /**
   * Issue 23 item 26: a job whose lock was lost while it ran (here an operator unlocked it) cannot have it
   * kept for lockAtLeastFor; unlock says so at WARN instead of silently freeing the lock (before, nothing was
   * logged).
   */
  @Test
  void anUnlockThatCannotKeepLockAtLeastForSaysSo() throws Exception {
    InJvmLockServer server = new InJvmLockServer();
    try (LockClient a = server.newClient(); LockClient operator = server.newClient();
        LocksmithLockProvider provider = new LocksmithLockProvider(a);
        io.locksmith.testkit.LogCapture log = new io.locksmith.testkit.LogCapture()) {
      LockingTaskExecutor instance = new DefaultLockingTaskExecutor(provider);
      instance.executeWithLock((Runnable) () -> assertThat(operator.forceUnlock("weekly-export")).isTrue(),
          new LockConfiguration(ClockProvider.now(), "weekly-export", Duration.ofSeconds(10),
              Duration.ofSeconds(5)));
      assertThat(log.lines("ShedLock lock 'weekly-export' was lost before the job ended")).isEqualTo(1);
      assertThat(log.text()).contains("lockAtLeastFor");
      Optional<SimpleLock> again = provider.lock(job("weekly-export"));
      assertThat(again).as("free, as the WARN says").isPresent();
      again.get().unlock();
    }
  }
}
