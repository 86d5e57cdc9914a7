package io.locksmith.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.DistributedLock;
import io.locksmith.DistributedReadWriteLock;
import io.locksmith.DistributedSemaphore;
import io.locksmith.Lease;
import io.locksmith.LeaseState;
import io.locksmith.LockClient;
import io.locksmith.LockKind;
import io.locksmith.LockOptions;
import io.locksmith.injvm.InJvmLockServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The core's lock-kind machinery (downgrade, upgrade refusal, per-kind wake-ups and renewal) on the
 * in-JVM reference backend, with its fair, read-write and semaphore rules.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class InJvmLockKindsTest {
  private final InJvmLockServer server = new InJvmLockServer();
  private final LockClient a = server.newClient();
  private final LockClient b = server.newClient();

  @AfterEach
  void close() {
    a.close();
    b.close();
  }

  @Test
  void theInJvmBackendOffersEveryKind() {
    assertThat(a.capabilities().lockKinds()).containsExactlyInAnyOrder(LockKind.values());
  }

  @Test
  void kindsOfOneNameAreSeparateLocks() throws Exception {
    try (Lease exclusive = a.lock("n").acquire(); Lease fair = b.fairLock("n").acquire();
        Lease write = b.readWriteLock("n").writeLock().acquire()) {
      assertThat(List.of(exclusive, fair, write)).allMatch(l -> l.state() == LeaseState.HELD);
    }
  }

  @Test
  void aFairLockIsGrantedInArrivalOrderAndAZeroWaitCallerDoesNotBargeIn() throws Exception {
    Lease held = a.fairLock("q").acquire();
    List<CompletableFuture<Lease>> waiting = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      LockClient c = i % 2 == 0 ? a : b;
      waiting.add(c.fairLock("q").acquireAsync(Duration.ofSeconds(10)).toCompletableFuture());
      int queued = i + 1;
      assertThat(Eventually.eventually(Duration.ofSeconds(5),
          () -> a.fairLock("q").inspect().orElseThrow().waiters() == queued)).isTrue();
    }
    held.release();
    assertThat(b.fairLock("q").tryAcquire()).as("queued waiters go first").isEmpty();
    long lastToken = held.fencingToken();
    for (CompletableFuture<Lease> next : waiting) {
      Lease lease = next.get(5, TimeUnit.SECONDS);
      assertThat(lease.fencingToken()).isGreaterThan(lastToken);
      lastToken = lease.fencingToken();
      for (CompletableFuture<Lease> later : waiting.subList(waiting.indexOf(next) + 1, waiting.size())) {
        assertThat(later).isNotDone();
      }
      lease.release();
    }
  }

  @Test
  void readersShareAndAWriterWaitsForThem() throws Exception {
    DistributedReadWriteLock rw = a.readWriteLock("rw");
    Lease r1 = rw.readLock().acquire();
    Lease r2 = b.readWriteLock("rw").readLock().acquire(Duration.ofSeconds(1));
    assertThat(b.readWriteLock("rw").writeLock().tryAcquire()).isEmpty();
    CompletableFuture<Lease> writer =
        b.readWriteLock("rw").writeLock().acquireAsync(Duration.ofSeconds(10)).toCompletableFuture();
    assertThat(Eventually.eventually(Duration.ofSeconds(5),
        () -> rw.readLock().inspect().orElseThrow().waiters() == 1)).isTrue();
    assertThat(a.readWriteLock("rw").readLock().tryAcquire())
        .as("a waiting writer keeps new readers out").isEmpty();
    r1.release();
    assertThat(writer).isNotDone();
    r2.release();
    Lease w = writer.get(5, TimeUnit.SECONDS);
    assertThat(rw.readLock().tryAcquire()).isEmpty();
    w.release();
    assertThat(rw.readLock().tryAcquire()).isPresent();
  }

  @Test
  void aWriteLeaseDowngradesWithoutLettingAWriterIn() throws Exception {
    DistributedReadWriteLock rw = a.readWriteLock("dg");
    Lease write = rw.writeLock().acquire();
    CompletableFuture<Lease> otherWriter =
        b.readWriteLock("dg").writeLock().acquireAsync(Duration.ofSeconds(10)).toCompletableFuture();
    Lease read = rw.downgrade(write);
    assertThat(write.state()).isEqualTo(LeaseState.RELEASED);
    assertThat(read.state()).isEqualTo(LeaseState.HELD);
    assertThat(read.fencingToken()).isEqualTo(write.fencingToken());
    assertThat(otherWriter).isNotDone();
    read.release();
    otherWriter.get(5, TimeUnit.SECONDS).release();
    assertThatThrownBy(() -> rw.downgrade(read)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void theLockViewDowngradesAndRefusesToUpgrade() throws Exception {
    DistributedReadWriteLock rw = a.readWriteLock("view");
    DistributedLock read = rw.readLock();
    DistributedLock write = rw.writeLock();
    write.lock();
    read.lock();
    write.unlock();
    assertThat(read.isHeldByCurrentThread()).isTrue();
    Lease otherReader = b.readWriteLock("view").readLock().tryAcquire().orElseThrow(); // readers share
    assertThat(b.readWriteLock("view").writeLock().tryAcquire()).isEmpty();
    otherReader.release();
    assertThatThrownBy(write::lock).isInstanceOf(IllegalStateException.class).hasMessageContaining("upgrad");
    assertThatThrownBy(() -> write.tryAcquire(Duration.ofSeconds(5)))
        .isInstanceOf(IllegalStateException.class);
    read.unlock();
    assertThat(write.tryLock()).isTrue();
    write.unlock();
  }

  @Test
  void aSemaphoreGrantsItsPermitsAndWakesAWaiterOnRelease() throws Exception {
    DistributedSemaphore s = a.semaphore("sem", 2);
    Lease p1 = s.acquire();
    Lease p2 = b.semaphore("sem", 5).acquire(Duration.ofSeconds(1)); // the stored count (2) wins
    assertThat(p2.fencingToken()).isGreaterThan(p1.fencingToken());
    assertThat(s.tryAcquire()).isEmpty();
    assertThat(s.describe()).satisfies(info -> {
      assertThat(info.permits()).isEqualTo(2);
      assertThat(info.taken()).isEqualTo(2);
      assertThat(info.available()).isZero();
    });
    CompletableFuture<Lease> waiter = b.semaphore("sem", 2).acquireAsync(Duration.ofSeconds(10)).toCompletableFuture();
    p1.release();
    waiter.get(5, TimeUnit.SECONDS).release();
    p2.release();
  }

  @Test
  void raisingThePermitsWakesWaitersAndLoweringThemRevokesNothing() throws Exception {
    DistributedSemaphore s = a.semaphore("ops", 1);
    Lease first = s.acquire();
    CompletableFuture<Lease> w1 = b.semaphore("ops", 1).acquireAsync(Duration.ofSeconds(10)).toCompletableFuture();
    CompletableFuture<Lease> w2 = b.semaphore("ops", 1).acquireAsync(Duration.ofSeconds(10)).toCompletableFuture();
    assertThat(Eventually.eventually(Duration.ofSeconds(5), () -> s.describe().waiters() == 2)).isTrue();
    s.setPermits(3);
    Lease second = w1.get(5, TimeUnit.SECONDS);
    Lease third = w2.get(5, TimeUnit.SECONDS);
    s.setPermits(1);
    assertThat(List.of(first, second, third)).allMatch(l -> l.state() == LeaseState.HELD);
    first.release();
    second.release();
    assertThat(s.tryAcquire()).as("still one taken of one").isEmpty();
    third.release();
    assertThat(s.tryAcquire()).isPresent();
    assertThatThrownBy(() -> s.setPermits(0)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> a.semaphore("bad", 0)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aPermitWhoseFixedLeaseRunsOutComesBack() throws Exception {
    DistributedSemaphore s = a.semaphore("expiring", 1, LockOptions.fixed(Duration.ofMillis(200)));
    Lease held = s.acquire();
    Lease next = b.semaphore("expiring", 1).acquire(Duration.ofSeconds(5));
    assertThat(held.state()).isEqualTo(LeaseState.LOST);
    next.release();
  }
}
