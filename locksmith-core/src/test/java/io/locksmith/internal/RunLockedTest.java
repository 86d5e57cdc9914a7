package io.locksmith.internal;

import io.locksmith.testkit.LogCapture;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.AcquireInterruptedException;
import io.locksmith.AcquireTimeoutException;
import io.locksmith.DistributedLock;
import io.locksmith.DistributedReadWriteLock;
import io.locksmith.DistributedSemaphore;
import io.locksmith.Lease;
import io.locksmith.LockClient;
import io.locksmith.LockOptions;
import io.locksmith.injvm.InJvmLockServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code runLocked} and {@code callLocked} on every kind (issue 13 item 8). */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class RunLockedTest {
  private static final Duration WAIT = Duration.ofSeconds(2);
  private static final Duration SHORT = Duration.ofMillis(100);

  /** A task declaring a checked exception, as real work does. */
  private static String readReport(boolean fail) throws IOException {
    if (fail) {
      throw new IOException("disk gone");
    }
    return "report";
  }

  @Test
  void runsTheTaskHoldingTheLockAndReleasesAfterwards() throws Exception {
    InJvmLockServer server = new InJvmLockServer();
    try (LockClient client = server.newClient(); LockClient other = server.newClient()) {
      DistributedLock lock = client.lock("job");
      AtomicBoolean heldDuring = new AtomicBoolean();
      lock.runLocked(WAIT, () -> heldDuring.set(other.inspect("job").isPresent() && lock.isHeldByCurrentThread()));
      assertThat(heldDuring).isTrue();
      assertThat(other.inspect("job")).as("released after the task").isEmpty();

      // no try/catch needed for a task without checked exceptions; a checked one is declared by the call
      String result = lock.callLocked(WAIT, () -> readReport(false));
      assertThat(result).isEqualTo("report");
      assertThat(other.inspect("job")).isEmpty();
    }
  }

  @Test
  void theTasksExceptionsPassThroughUnchangedAndTheLockIsReleased() throws Exception {
    InJvmLockServer server = new InJvmLockServer();
    try (LockClient client = server.newClient(); LockClient other = server.newClient()) {
      DistributedLock lock = client.lock("job");
      assertThatThrownBy(() -> lock.callLocked(WAIT, () -> readReport(true)))
          .isExactlyInstanceOf(IOException.class).hasMessage("disk gone");
      assertThat(other.inspect("job")).isEmpty();
      UncheckedIOException unchecked = new UncheckedIOException(new IOException("x"));
      assertThatThrownBy(() -> lock.runLocked(WAIT, () -> {
        throw unchecked;
      })).isSameAs(unchecked);
      assertThat(other.inspect("job")).isEmpty();
      DistributedSemaphore permits = client.semaphore("pool", 1);
      assertThatThrownBy(() -> permits.callLocked(WAIT, () -> readReport(true))).isExactlyInstanceOf(IOException.class);
      assertThat(permits.describe().taken()).isZero();
    }
  }

  @Test
  void aWaitThatRunsOutThrowsTheTimeoutAndDoesNotRunTheTask() {
    InJvmLockServer server = new InJvmLockServer();
    try (LockClient holder = server.newClient(); LockClient client = server.newClient()) {
      holder.lock("busy").tryAcquire().orElseThrow();
      holder.semaphore("busy-sem", 1).tryAcquire().orElseThrow();
      AtomicBoolean ran = new AtomicBoolean();
      assertThatThrownBy(() -> client.lock("busy").runLocked(SHORT, () -> ran.set(true)))
          .isInstanceOf(AcquireTimeoutException.class).hasMessageStartingWith("exclusive lock 'busy'");
      assertThatThrownBy(() -> client.semaphore("busy-sem", 1).runLocked(SHORT, () -> ran.set(true)))
          .isInstanceOf(AcquireTimeoutException.class).hasMessageStartingWith("semaphore 'busy-sem'");
      assertThat(ran).isFalse();
    }
  }

  @Test
  void anInterruptWhileWaitingIsUncheckedAndKeepsTheInterruptStatus() throws Exception {
    InJvmLockServer server = new InJvmLockServer();
    try (LockClient holder = server.newClient(); LockClient client = server.newClient()) {
      holder.lock("busy").tryAcquire().orElseThrow();
      AtomicReference<Throwable> thrown = new AtomicReference<>();
      AtomicBoolean stillInterrupted = new AtomicBoolean();
      CountDownLatch done = new CountDownLatch(1);
      Thread waiter = new Thread(() -> {
        try {
          client.lock("busy").runLocked(Duration.ofSeconds(20), () -> { });
        } catch (RuntimeException e) {
          thrown.set(e);
          stillInterrupted.set(Thread.currentThread().isInterrupted());
        }
        done.countDown();
      });
      waiter.start();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (waiter.getState() != Thread.State.WAITING && waiter.getState() != Thread.State.TIMED_WAITING
          && System.nanoTime() < deadline) {
        Thread.onSpinWait();
      }
      waiter.interrupt();
      assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(thrown.get()).isInstanceOf(AcquireInterruptedException.class)
          .hasCauseInstanceOf(InterruptedException.class).hasMessageContaining("'busy'");
      assertThat(stillInterrupted).as("the interrupt status is set again").isTrue();

      Thread.currentThread().interrupt(); // interrupted on entry: nothing is sent, nothing runs
      AtomicBoolean ran = new AtomicBoolean();
      assertThatThrownBy(() -> client.semaphore("free", 1).runLocked(WAIT, () -> ran.set(true)))
          .isInstanceOf(AcquireInterruptedException.class);
      assertThat(Thread.interrupted()).isTrue();
      assertThat(ran).isFalse();
    }
  }

  @Test
  void onALockTheCallingThreadHoldsItReentrantlyWithItsFencingToken() throws Exception {
    InJvmLockServer server = new InJvmLockServer();
    try (LockClient client = server.newClient(); LockClient other = server.newClient()) {
      DistributedLock lock = client.lock("nested");
      long token = lock.callLocked(WAIT, () -> lock.callLocked(SHORT, () -> {
        assertThat(lock.getHoldCount()).isEqualTo(2);
        return lock.currentThreadLease().orElseThrow().fencingToken();
      }));
      assertThat(token).isPositive();
      assertThat(other.inspect("nested")).isEmpty();
      assertThat(lock.isHeldByCurrentThread()).isFalse();

      DistributedReadWriteLock rw = client.readWriteLock("doc");
      int[] readers = new int[1];
      rw.writeLock().runLocked(WAIT, () -> rw.readLock().runLocked(SHORT, () -> readers[0]++)); // a downgrade
      assertThat(readers[0]).isEqualTo(1);
      assertThatThrownBy(() -> rw.readLock().runLocked(WAIT, () -> rw.writeLock().runLocked(SHORT, () -> { })))
          .as("an upgrade is refused, as by the Lock view").isInstanceOf(IllegalStateException.class);
      assertThat(other.readWriteLock("doc").writeLock().tryLock()).isTrue();
    }
  }

  @Test
  void aSemaphoreTakesOnePermitPerCall() throws Exception {
    InJvmLockServer server = new InJvmLockServer();
    try (LockClient client = server.newClient()) {
      DistributedSemaphore pool = client.semaphore("pool", 2);
      int taken = pool.callLocked(WAIT, () -> pool.callLocked(WAIT, () -> pool.describe().taken()));
      assertThat(taken).isEqualTo(2);
      assertThat(pool.describe().taken()).isZero();
    }
  }

  @Test
  void aReleaseThatFailsAfterTheTaskIsLoggedNotThrown() throws Exception {
    InJvmLockServer server = new InJvmLockServer();
    try (LogCapture log = new LogCapture(); LockClient client = server.newClient()) {
      LockOptions fixed = LockOptions.fixed(Duration.ofSeconds(5));
      String done = client.lock("outage", fixed).callLocked(WAIT, () -> {
        server.setReachable(false);
        return "committed";
      });
      assertThat(done).isEqualTo("committed");
      assertThat(log.text()).contains("lock 'outage': unlock after the task failed");

      server.setReachable(true);
      String semDone = client.semaphore("outage-sem", 1, fixed).callLocked(WAIT, () -> {
        server.setReachable(false);
        return "committed";
      });
      assertThat(semDone).isEqualTo("committed");
      assertThat(log.text()).contains("lease on lock 'outage-sem' (token");
      server.setReachable(true);
    }
  }

  @Test
  void badArgumentsAreRejectedBeforeAnythingIsSent() {
    InJvmLockServer server = new InJvmLockServer();
    try (LockClient client = server.newClient()) {
      DistributedLock lock = client.lock("args");
      assertThatThrownBy(() -> lock.runLocked(WAIT, null)).isInstanceOf(NullPointerException.class);
      assertThatThrownBy(() -> lock.runLocked(null, () -> { })).isInstanceOf(NullPointerException.class);
      assertThatThrownBy(() -> lock.runLocked(Duration.ofSeconds(-1), () -> { }))
          .isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> client.semaphore("s", 1).callLocked(Duration.ofSeconds(-1), () -> 1))
          .isInstanceOf(IllegalArgumentException.class);
    }
  }
}
