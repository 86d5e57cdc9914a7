package io.locksmith.internal;

import io.locksmith.testkit.LogCapture;
import static io.locksmith.testkit.LogCapture.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.ClientOptions;
import io.locksmith.DistributedLock;
import io.locksmith.Lease;
import io.locksmith.LeaseState;
import io.locksmith.LockClient;
import io.locksmith.LockOptions;
import io.locksmith.injvm.InJvmLockServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Leases nobody will release (issue 13 item 6): a lease-view lease dropped while held, and a Lock-view
 * hold whose thread ended. Both used to be renewed for the life of the client without a word.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LeakDetectionTest {
  private static final LockOptions WATCHED = LockOptions.watched(Duration.ofSeconds(30));

  /** Acquires and lets the lease go out of scope: the leak under test. */
  private static void acquireAndForget(DistributedLock lock) {
    lock.tryAcquire().orElseThrow();
  }

  /** One collection and one look at the detector's queue; true once {@code name} is free. */
  private static boolean collectedAndFreed(LockClient holder, LockClient other, String name) {
    System.gc();
    ((DefaultLockClient) holder).pollLeaksNow();
    return other.inspect(name).isEmpty();
  }

  @Test
  void aLeaseDroppedWithoutReleaseIsReportedAndReleasedAndTheNextOneWithWhereItWasAcquired() throws Exception {
    InJvmLockServer server = new InJvmLockServer();
    try (LogCapture log = new LogCapture();
        LockClient holder = server.newClient();
        LockClient other = server.newClient()) {
      acquireAndForget(holder.lock("exports", WATCHED));
      assertThat(other.inspect("exports")).as("held after the acquisition").isPresent();

      assertThat(eventually(Duration.ofSeconds(20), () -> collectedAndFreed(holder, other, "exports")))
          .as("a lease dropped without release is released once the collector finds it unreachable")
          .isTrue();
      assertThat(log.text())
          .contains("a lease on lock 'exports'")
          .contains("became unreachable without release() or close()")
          .as("no stack recorded before the first leak: the warning says so and how to get one")
          .contains("where it was acquired was not recorded")
          .contains("acquisitionSites(true)")
          .doesNotContain("acquireAndForget");
      assertThat(((DefaultLockClient) holder).watchedForLeaks()).isZero();

      // from the first leak on, acquisitions record where they were made
      acquireAndForget(holder.lock("exports-again", WATCHED));
      assertThat(eventually(Duration.ofSeconds(20), () -> collectedAndFreed(holder, other, "exports-again")))
          .as("the second dropped lease is released as well").isTrue();
      String second = log.text().substring(log.text().indexOf("a lease on lock 'exports-again'"));
      assertThat(second)
          .as("the second warning carries the stack of the acquisition").contains("acquireAndForget")
          .doesNotContain("was not recorded");
      assertThat(((DefaultLockClient) holder).watchedForLeaks()).isZero();
    }
  }

  @Test
  void withAcquisitionSitesOnTheFirstLeakIsReportedWithWhereItWasAcquired() throws Exception {
    InJvmLockServer server = new InJvmLockServer();
    try (LogCapture log = new LogCapture();
        LockClient holder = server.newClient(ClientOptions.builder().acquisitionSites(true).build());
        LockClient other = server.newClient()) {
      acquireAndForget(holder.lock("exports", WATCHED));
      assertThat(eventually(Duration.ofSeconds(20), () -> collectedAndFreed(holder, other, "exports")))
          .as("released once the collector finds it unreachable").isTrue();
      assertThat(log.text())
          .contains("became unreachable without release() or close()")
          .as("the first warning carries the stack of the acquisition").contains("acquireAndForget")
          .doesNotContain("was not recorded");
    }
  }

  @Test
  void aThreadThatEndsHoldingALockViewHoldIsReportedAndTheLockReleased() throws Exception {
    // The renewal after the thread ended must find it gone, before the lease runs out: a 300 ms lease is
    // renewed every 100 ms, so its renewal may be 200 ms late. On a loaded machine the renewal timer can
    // be later than that; the lease then runs out first (reported as such, not "released now"), which
    // says nothing about the code: the case runs again with twice the lease, up to 2.4 s
    List<String> missed = new ArrayList<>();
    for (long leaseMillis = 300; leaseMillis <= 2400; leaseMillis *= 2) {
      String name = "payouts-" + leaseMillis;
      if (endedThreadsHoldIsReleased(name, LockOptions.watched(Duration.ofMillis(leaseMillis)))) {
        return;
      }
      missed.add(leaseMillis + " ms");
      System.out.printf("[window] %s: the lease ran out before its renewal; again with twice the lease%n", name);
    }
    throw new AssertionError("every lease ran out before its renewal (the renewal timer was late): " + missed);
  }

  /** @return false if the lease ran out before a renewal found the thread gone (a late timer) */
  private static boolean endedThreadsHoldIsReleased(String name, LockOptions lease) throws Exception {
    InJvmLockServer server = new InJvmLockServer();
    try (LogCapture log = new LogCapture();
        LockClient holder = server.newClient();
        LockClient other = server.newClient()) {
      DistributedLock lock = holder.lock(name, lease);
      Thread forgetful = new Thread(() -> {
        lock.lock();
        lock.lock(); // two holds, no unlock
      }, "worker-that-forgets");
      forgetful.start();
      forgetful.join();
      assertThat(other.inspect(name)).as("held by the ended thread").isPresent();

      assertThat(eventually(Duration.ofSeconds(10), () -> other.inspect(name).isEmpty()))
          .as("the hold of an ended thread is released instead of renewed forever").isTrue();
      if (log.text().contains("lease on lock '" + name + "' (token 1) is lost: validity elapsed")) {
        return false;
      }
      assertThat(log.text())
          .contains("thread 'worker-that-forgets' ended while holding lock '" + name + "' (Lock view, 2 hold(s)")
          .contains("released now");
      assertThat(other.lock(name).tryLock()).isTrue();
      return true;
    }
  }

  @Test
  void aFixedLockViewHoldOfAnEndedThreadIsReportedWhenItExpires() throws Exception {
    InJvmLockServer server = new InJvmLockServer();
    try (LogCapture log = new LogCapture();
        LockClient holder = server.newClient()) {
      DistributedLock lock = holder.lock("fixed", LockOptions.fixed(Duration.ofMillis(200)));
      Thread forgetful = new Thread(lock::lock, "fixed-forgetter");
      forgetful.start();
      forgetful.join();
      assertThat(eventually(Duration.ofSeconds(10),
          () -> log.text().contains("thread 'fixed-forgetter' ended while holding lock 'fixed'")))
          .as("reported when its lease runs out, and the ended thread's entry dropped").isTrue();
    }
  }

  @Test
  void leasesEndedProperlyAreNeitherReportedNorKeptTracked() throws Exception {
    InJvmLockServer server = new InJvmLockServer();
    try (LogCapture log = new LogCapture();
        LockClient client = server.newClient();
        LockClient other = server.newClient()) {
      DefaultLockClient internal = (DefaultLockClient) client;
      DistributedLock lock = client.lock("proper", WATCHED);
      lock.tryAcquire().orElseThrow().release();
      try (Lease lease = lock.acquire(Duration.ofSeconds(1))) {
        assertThat(internal.watchedForLeaks()).isEqualTo(1);
      }
      assertThat(lock.acquireAsync(Duration.ofSeconds(1)).toCompletableFuture().get(5, TimeUnit.SECONDS)
          .releaseAsync().toCompletableFuture().get(5, TimeUnit.SECONDS)).isTrue();
      lock.lock(); // the Lock view is not tracked: its thread owns it
      lock.unlock();
      assertThat(internal.watchedForLeaks()).as("ended leases are unregistered at once").isZero();

      for (int i = 0; i < 3; i++) {
        System.gc();
        internal.pollLeaksNow();
      }
      assertThat(log.text()).doesNotContain("became unreachable");
      assertThat(other.inspect("proper")).isEmpty();
    }
  }

  @Test
  void listenersAreGivenTheObjectTheCallerHolds() throws Exception {
    InJvmLockServer server = new InJvmLockServer();
    try (LockClient client = server.newClient()) {
      Lease lease = client.lock("same", WATCHED).tryAcquire().orElseThrow();
      AtomicReference<Lease> told = new AtomicReference<>();
      java.util.concurrent.CountDownLatch released = new java.util.concurrent.CountDownLatch(1);
      lease.addListener((l, from, to) -> {
        told.set(l);
        released.countDown();
      });
      assertThat(lease.checkHeld()).isSameAs(lease);
      lease.release();
      assertThat(released.await(5, TimeUnit.SECONDS)).isTrue();
      assertThat(told.get()).isSameAs(lease);
      assertThat(lease.state()).isEqualTo(LeaseState.RELEASED);
    }
  }

  @Test
  void withLeakDetectionOffNothingIsTracked() {
    InJvmLockServer server = new InJvmLockServer();
    try (LockClient client = server.newClient(ClientOptions.builder().leakDetection(false).build())) {
      Lease lease = client.lock("untracked", WATCHED).tryAcquire().orElseThrow();
      assertThat(((DefaultLockClient) client).watchedForLeaks()).isZero();
      assertThat(lease.release()).isTrue();
    }
  }
}
