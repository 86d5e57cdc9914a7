package io.locksmith.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.BackendUnavailableException;
import io.locksmith.Lease;
import io.locksmith.LockInfo;
import io.locksmith.spi.AcquireMode;
import io.locksmith.spi.AcquireReply;
import io.locksmith.spi.HandOffReply;
import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.postgres.PostgresServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * PostgreSQL's local hand-off ({@link JdbcBackend#releaseAndHandOff}, {@link LocalHandOff}): a release to
 * a waiting owner of the same client is one statement that grants it with a new, larger token and deletes
 * its waiter registration; it grants nothing for an owner that does not hold; a late reply is a late
 * grant; and a run of hand-offs does not keep another client's waiter out.
 */
class PostgresLocalHandOffTest {
  @RegisterExtension
  static final SharedTopology<PostgresServer> PG = PostgresServer.shared();

  private static final long LEASE = 30_000;

  private static DataSource pg() {
    return TestDatabases.pool(PG.get());
  }

  @Test
  void aHandOffGrantsTheWaiterWithALargerTokenAndDropsItsRegistration() {
    String name = "hand-off-" + UUID.randomUUID();
    try (JdbcLockClient client = JdbcLockClient.builder().dataSource(pg()).createTableIfMissing().build()) {
      JdbcBackend backend = client.backend();
      assertThat(backend.handsOffLocally()).isTrue();
      String first = client.clientId() + ":first";
      String second = client.clientId() + ":second";
      String waiter = client.clientId() + ":w-second";
      AcquireReply held = backend.acquire(name, first, LEASE, AcquireMode.NEW, null).toCompletableFuture().join();
      assertThat(held.granted()).isTrue();
      AcquireReply refused = backend.acquire(name, second, LEASE, AcquireMode.NEW, waiter).toCompletableFuture().join();
      assertThat(refused.granted()).isFalse();
      assertThat(info(client, name).waiters()).as("the refused waiter is registered").isEqualTo(1);

      HandOffReply reply = backend.releaseAndHandOff(name, first, second, LEASE, waiter).toCompletableFuture().join();

      assertThat(reply.releaserHeld()).isTrue();
      assertThat(reply.grant()).isNotNull();
      assertThat(reply.grant().fencingToken()).isGreaterThan(held.fencingToken());
      LockInfo after = info(client, name);
      assertThat(after.owner()).isEqualTo(second);
      assertThat(after.holdCount()).isEqualTo(1);
      assertThat(after.fencingToken()).isEqualTo(reply.grant().fencingToken());
      assertThat(after.remainingTtl()).isGreaterThan(Duration.ofSeconds(20));
      assertThat(after.waiters()).as("the hand-off deleted the waiter's registration").isZero();

      // the first owner no longer holds: nothing changes, nothing is granted
      HandOffReply again = backend.releaseAndHandOff(name, first, client.clientId() + ":third", LEASE,
          client.clientId() + ":w-third").toCompletableFuture().join();
      assertThat(again.releaserHeld()).isFalse();
      assertThat(again.grant()).isNull();
      assertThat(info(client, name).owner()).isEqualTo(second);
    }
  }

  /** Threads of one client pass the lock by hand-offs: one holder at a time, every token larger. */
  @Test
  void threadsOfOneClientHandTheLockOnWithGrowingTokens() throws Exception {
    String name = "hand-off-run-" + UUID.randomUUID();
    int threads = 4;
    int rounds = 40;
    try (JdbcLockClient client = JdbcLockClient.builder().dataSource(pg()).createTableIfMissing().build()) {
      AtomicLong lastToken = new AtomicLong();
      AtomicInteger inside = new AtomicInteger();
      AtomicReference<Throwable> failure = new AtomicReference<>();
      CountDownLatch go = new CountDownLatch(1);
      List<Thread> all = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        Thread thread = new Thread(() -> {
          try {
            go.await();
            for (int i = 0; i < rounds; i++) {
              Lease lease = client.lock(name).tryAcquire(Duration.ofSeconds(20))
                  .orElseThrow(() -> new AssertionError("not granted within 20 s"));
              try {
                if (inside.incrementAndGet() != 1) {
                  throw new AssertionError("two holders at once");
                }
                long before = lastToken.getAndSet(lease.fencingToken());
                if (lease.fencingToken() <= before) {
                  throw new AssertionError("token " + lease.fencingToken() + " after " + before);
                }
                inside.decrementAndGet();
              } finally {
                lease.release();
              }
            }
          } catch (Throwable e) {
            failure.compareAndSet(null, e);
          }
        });
        all.add(thread);
        thread.start();
      }
      go.countDown();
      for (Thread t : all) {
        t.join();
      }
      assertThat(failure.get()).isNull();
      assertThat(client.backend().handOffs.granted()).as("releases handed the lock on locally").isPositive();
    }
  }

  /**
   * Client A's threads keep the lock busy with hand-offs; client B's one thread must still be granted,
   * five times: the cohort rule ends A's run and leaves B's woken waiter the lock.
   */
  @Test
  void aRunOfHandOffsLetsAnotherClientsWaiterIn() throws Exception {
    String name = "hand-off-fair-" + UUID.randomUUID();
    try (JdbcLockClient a = JdbcLockClient.builder().dataSource(pg()).createTableIfMissing().build();
        JdbcLockClient b = JdbcLockClient.builder().dataSource(pg()).build()) {
      AtomicBoolean stop = new AtomicBoolean();
      AtomicReference<Throwable> failure = new AtomicReference<>();
      List<Thread> threads = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        Thread thread = new Thread(() -> {
          try {
            while (!stop.get()) {
              a.lock(name).tryAcquire(Duration.ofSeconds(20))
                  .orElseThrow(() -> new AssertionError("A not granted within 20 s")).release();
            }
          } catch (Throwable e) {
            failure.compareAndSet(null, e);
          }
        });
        threads.add(thread);
        thread.start();
      }
      int bGrants = 0;
      try {
        // A's run is under way before B asks
        long runStart = System.nanoTime();
        while (a.backend().handOffs.granted() < 2 * LocalHandOff.COHORT) {
          assertThat(System.nanoTime() - runStart).as("A handed off within 20 s").isLessThan(TimeUnit.SECONDS.toNanos(20));
          java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
        }
        for (int i = 0; i < 5; i++) {
          Optional<Lease> lease = b.lock(name).tryAcquire(Duration.ofSeconds(10));
          assertThat(lease).as("B's acquisition %d while A hands off (A: %d hand-offs)", i,
              a.backend().handOffs.granted()).isPresent();
          lease.get().release();
          bGrants++;
        }
      } finally {
        stop.set(true);
        for (Thread t : threads) {
          t.join();
        }
      }
      assertThat(failure.get()).isNull();
      assertThat(bGrants).isEqualTo(5);
    }
  }

  /**
   * A hand-off whose reply comes after the call timed out is a late grant: given back, since the next
   * owner's acquisition did not hold it, so the lock is free for others afterwards.
   */
  @Test
  void aLateHandOffIsGivenBack() throws Exception {
    // a call other than the held one that misses the short timeout on a loaded machine: again, doubled
    JdbcLateReplyTest.withGrowingTimeout(this::lateHandOff);
  }

  private void lateHandOff(Duration timeout) throws Exception {
    String name = "hand-off-late-" + UUID.randomUUID();
    HeldReplies held = new HeldReplies(pg());
    HeldReplies.Hold hold = null;
    try (JdbcLockClient a = JdbcLockClient.builder().dataSource(held).commandTimeout(timeout)
            .createTableIfMissing().build();
        JdbcLockClient b = JdbcLockClient.builder().dataSource(pg()).build()) {
      JdbcBackend backend = a.backend();
      String first = a.clientId() + ":first";
      String second = a.clientId() + ":second";
      assertThat(backend.acquire(name, first, LEASE, AcquireMode.NEW, null).toCompletableFuture().join().granted())
          .isTrue();
      hold = held.holdAfter(sql -> sql.startsWith("WITH r AS (UPDATE"));
      CompletableFuture<HandOffReply> reply = backend.releaseAndHandOff(name, first, second, LEASE,
          a.clientId() + ":w-second").toCompletableFuture();
      assertThat(hold.awaitHeld(5_000)).isTrue();
      assertThatThrownBy(() -> reply.get(5, TimeUnit.SECONDS)).hasCauseInstanceOf(BackendUnavailableException.class);
      hold.deliver();
      awaitQuiet(a);
      assertThat(backend.lateGrants.open()).as("no lock-and-owner entry left behind").isZero();
      Optional<Lease> lease = b.lock(name).tryAcquire();
      try {
        assertThat(lease).as("the late hand-off's grant was given back").isPresent();
      } finally {
        lease.ifPresent(Lease::release);
      }
    } finally {
      if (hold != null) {
        hold.deliver();
      }
    }
  }

  private static LockInfo info(JdbcLockClient client, String name) {
    return client.backend().inspect(name).toCompletableFuture().join().orElseThrow();
  }

  private static void awaitQuiet(JdbcLockClient client) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (client.db().busyCalls() > 0) {
      assertThat(System.nanoTime() - deadline).as("calls still in flight after 10 s").isNegative();
      Thread.sleep(5);
    }
  }
}
