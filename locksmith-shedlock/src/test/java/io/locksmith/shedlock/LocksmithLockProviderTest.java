package io.locksmith.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.LockClient;
import io.locksmith.injvm.InJvmLockServer;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** What the adapter adds to ShedLock's contract: the running job's fencing token. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
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
}
