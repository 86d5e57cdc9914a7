package io.locksmith;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.injvm.InJvmLockServer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** A {@link LockObserver} set in the client options hears every acquisition's outcome and every state change. */
class LockObserverTest {

  static final class Recorder implements LockObserver {
    final List<String> events = new CopyOnWriteArrayList<>();

    @Override
    public void acquireCompleted(String lockName, String kind, Outcome outcome, Duration elapsed, Lease lease) {
      events.add(kind + " " + lockName + " " + outcome + (lease != null ? " lease=" + lease.lockName() : ""));
      assertThat(elapsed.isNegative()).isFalse();
    }

    @Override
    public void leaseStateChanged(Lease lease, LeaseState from, LeaseState to) {
      events.add(lease.lockName() + " " + from + "->" + to);
    }
  }

  @Test
  void grantsTimeoutsReleasesAndKindsAreReported() throws Exception {
    Recorder recorder = new Recorder();
    LockClient client = new InJvmLockServer().newClient(ClientOptions.builder().observer(recorder).build());
    try {
      Lease a = client.lock("a").acquire(Duration.ZERO);
      assertThat(client.lock("a").tryAcquire()).isEmpty();
      a.release();
      DistributedLock read = client.readWriteLock("rw").readLock();
      read.lock();
      read.lock(); // a re-entry: not an acquisition
      read.unlock();
      read.unlock();
      client.semaphore("s", 2).acquire(Duration.ZERO).release();
      assertThat(recorder.events).containsExactly(
          "exclusive a GRANTED lease=a",
          "exclusive a TIMEOUT",
          "a HELD->RELEASED",
          "read rw GRANTED lease=rw",
          "rw HELD->RELEASED",
          "semaphore s GRANTED lease=s",
          "s HELD->RELEASED");
    } finally {
      client.close();
    }
  }

  @Test
  void anObserverThatThrowsDoesNotBreakTheLock() throws Exception {
    LockObserver broken = new LockObserver() {
      @Override
      public void acquireCompleted(String lockName, String kind, Outcome outcome, Duration elapsed, Lease lease) {
        throw new IllegalStateException("observer bug");
      }
    };
    LockClient client = new InJvmLockServer().newClient(ClientOptions.builder().observer(broken).build());
    try (Lease lease = client.lock("x").acquire(Duration.ZERO)) {
      assertThat(lease.isHeld()).isTrue();
    } finally {
      client.close();
    }
  }

  @Test
  void withoutAnObserverNothingIsSet() {
    assertThat(ClientOptions.defaults().observer()).isEmpty();
    LockObserver o = new LockObserver() {};
    assertThat(ClientOptions.builder().observer(o).build().mutate().build().observer()).containsSame(o);
  }
}
