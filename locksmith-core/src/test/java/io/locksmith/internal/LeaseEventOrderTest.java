package io.locksmith.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.ClientOptions;
import io.locksmith.Lease;
import io.locksmith.LeaseState;
import io.locksmith.LockObserver;
import io.locksmith.LockOptions;
import io.locksmith.injvm.InJvmLockServer;
import io.locksmith.internal.LeaseLifecycleTest.ManualTicker;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Two threads change one lease's state at once; listeners (and the observer, and the client's count of
 * uncertain leases) must see the changes in the order the state took them. The window between a thread
 * setting the state and telling about it is held open deterministically: the observer, which is told on
 * the changing thread, blocks the first thread on a latch until the second thread's change is done.
 * No sleeps; every wait is bounded.
 */
@Timeout(30)
class LeaseEventOrderTest {
  private static final long WAIT_SECONDS = 10;

  /** Blocks the first report of {@code from -> to}, until {@link #proceed} opens. */
  private static final class GateObserver implements LockObserver {
    final CountDownLatch blocked = new CountDownLatch(1);
    final CountDownLatch proceed = new CountDownLatch(1);
    final List<LeaseState> seen = new CopyOnWriteArrayList<>();
    private final AtomicBoolean armed = new AtomicBoolean();
    private volatile LeaseState from;
    private volatile LeaseState to;

    void armFor(LeaseState from, LeaseState to) {
      this.from = from;
      this.to = to;
      armed.set(true);
    }

    @Override
    public void leaseStateChanged(Lease lease, LeaseState from, LeaseState to) {
      if (from == this.from && to == this.to && armed.compareAndSet(true, false)) {
        blocked.countDown();
        try {
          proceed.await(WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      seen.add(to);
    }
  }

  private final ManualTicker clock = new ManualTicker(); // nothing expires unless the test says so
  private final GateObserver observer = new GateObserver();

  private DefaultLockClient client(InJvmLockServer server) {
    return (DefaultLockClient) server.newClient(ClientOptions.builder().ticker(clock).observer(observer).build());
  }

  /**
   * Runs {@code first} on a thread of its own until its observer call blocks, then {@code second} on this
   * thread, then lets the first go on, and waits until every listener call queued by then has run.
   */
  private void race(DefaultLease lease, Consumer<DefaultLease> first, Consumer<DefaultLease> second)
      throws InterruptedException {
    Thread a = new Thread(() -> first.accept(lease), "first-transition");
    a.start();
    assertThat(observer.blocked.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("first transition reached the observer")
        .isTrue();
    second.accept(lease);
    observer.proceed.countDown();
    a.join(TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
    assertThat(a.isAlive()).as("first transition returned").isFalse();
  }

  /** Waits until the listener calls queued before now have run (the event thread runs them in order). */
  private static void flushListeners(DefaultLockClient client) throws InterruptedException {
    CountDownLatch flushed = new CountDownLatch(1);
    client.fire(flushed::countDown);
    assertThat(flushed.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void aListenerSeesLostLastWhenTheLossRacesARenewalReply() throws Exception {
    InJvmLockServer server = new InJvmLockServer(clock);
    try (DefaultLockClient client = client(server)) {
      Lease lease = client.lock("order", LockOptions.watched(Duration.ofSeconds(30))).acquire();
      DefaultLease d = LeaseHandle.unwrap(lease);
      List<LeaseState> heard = new CopyOnWriteArrayList<>();
      lease.addListener((l, from, to) -> heard.add(to));
      assertThat(d.markUncertain("test: the connection dropped")).isTrue();
      observer.armFor(LeaseState.UNCERTAIN, LeaseState.HELD);
      // first: a renewal's reply makes it HELD again; second, meanwhile: the lease is found lost
      race(d, l -> l.onRenewalReply(clock.nanoTime(), true, null), l -> l.markLost("test: evicted"));
      flushListeners(client);
      assertThat(lease.state()).isEqualTo(LeaseState.LOST);
      assertThat(heard).as("listener calls in the order the state took them, LOST last")
          .containsExactly(LeaseState.UNCERTAIN, LeaseState.HELD, LeaseState.LOST);
      assertThat(observer.seen).as("the observer too")
          .containsExactly(LeaseState.UNCERTAIN, LeaseState.HELD, LeaseState.LOST);
    }
  }

  @Test
  void aLeaseHeldAgainIsNotLeftCountedAsUncertain() throws Exception {
    InJvmLockServer server = new InJvmLockServer(clock);
    try (DefaultLockClient client = client(server)) {
      Lease lease = client.lock("held-again", LockOptions.watched(Duration.ofSeconds(30))).acquire();
      DefaultLease d = LeaseHandle.unwrap(lease);
      List<LeaseState> heard = new CopyOnWriteArrayList<>();
      lease.addListener((l, from, to) -> heard.add(to));
      observer.armFor(LeaseState.HELD, LeaseState.UNCERTAIN);
      // first: the connection drops; second, meanwhile: a renewal's reply confirms the lease
      race(d, l -> l.markUncertain("test: the connection dropped"), l -> l.onRenewalReply(clock.nanoTime(), true, null));
      flushListeners(client);
      assertThat(lease.state()).isEqualTo(LeaseState.HELD);
      assertThat(client.signals().countsAsUncertain(d)).as("a HELD lease is not counted as UNCERTAIN").isFalse();
      assertThat(heard).containsExactly(LeaseState.UNCERTAIN, LeaseState.HELD);
      assertThat(lease.release()).isTrue();
    }
  }

  @Test
  void aLeaseReleasedWhileItBecameUncertainIsNotLeftCountedAsUncertain() throws Exception {
    InJvmLockServer server = new InJvmLockServer(clock);
    try (DefaultLockClient client = client(server)) {
      Lease lease = client.lock("released", LockOptions.watched(Duration.ofSeconds(30))).acquire();
      DefaultLease d = LeaseHandle.unwrap(lease);
      observer.armFor(LeaseState.HELD, LeaseState.UNCERTAIN);
      race(d, l -> l.markUncertain("test: the connection dropped"), l -> assertThat(lease.release()).isTrue());
      flushListeners(client);
      assertThat(lease.state()).isEqualTo(LeaseState.RELEASED);
      assertThat(client.signals().countsAsUncertain(d)).as("a RELEASED lease is not counted as UNCERTAIN")
          .isFalse();
    }
  }
}
