package io.locksmith.spring.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.LeaseState;
import io.locksmith.LockClient;
import io.locksmith.LockKind;
import io.locksmith.LockOptions;
import io.locksmith.injvm.InJvmLockServer;
import io.locksmith.jdbc.JdbcLockClient;
import io.locksmith.testkit.h2.H2Database;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/** What Locksmith's registry adds to, or decides beyond, the LockRegistry contract; on the in-JVM backend. */
@Tag("unit")
@Timeout(value = 30, unit = TimeUnit.SECONDS)
@Execution(ExecutionMode.SAME_THREAD) // 0.2 s in all: nothing to gain from running side by side
class LocksmithLockRegistryTest {
  private final InJvmLockServer server = new InJvmLockServer();
  private final LockClient client = server.newClient();
  private final LockClient operator = server.newClient();

  @AfterEach
  void close() {
    client.close();
    operator.close();
  }

  private static <T> T onOtherThread(java.util.concurrent.Callable<T> task) throws Exception {
    CompletableFuture<T> result = new CompletableFuture<>();
    Thread t = new Thread(() -> {
      try {
        result.complete(task.call());
      } catch (Throwable e) {
        result.completeExceptionally(e);
      }
    });
    t.setDaemon(true);
    t.start();
    return result.get(10, TimeUnit.SECONDS);
  }

  @Test
  void theCallingThreadsLeaseAndFencingToken() throws Exception {
    LocksmithLockRegistry registry = new LocksmithLockRegistry(client);
    Lock lock = registry.obtain("orders");
    assertThat(registry.fencingToken("orders")).isEmpty();
    assertThat(registry.currentLease("orders")).isEmpty();

    lock.lock();
    long first = registry.fencingToken("orders").orElseThrow();
    assertThat(registry.currentLease("orders")).hasValueSatisfying(l -> {
      assertThat(l.state()).isEqualTo(LeaseState.HELD);
      assertThat(l.lockName()).isEqualTo("orders");
    });
    lock.lock();
    assertThat(registry.fencingToken("orders")).as("re-entry keeps the token").hasValue(first);
    assertThat(onOtherThread(() -> registry.fencingToken("orders"))).as("another thread holds nothing")
        .isEqualTo(OptionalLong.empty());
    lock.unlock();
    lock.unlock();
    assertThat(registry.fencingToken("orders")).isEmpty();

    long second = registry.executeLocked("orders", () -> registry.fencingToken("orders").orElseThrow());
    assertThat(second).as("every grant a larger token").isGreaterThan(first);
  }

  @Test
  void aLossIsSignalledAsItHappensAndUnlockThenThrows() throws Exception {
    List<String> lost = new CopyOnWriteArrayList<>();
    CountDownLatch told = new CountDownLatch(1);
    LocksmithLockRegistry registry = LocksmithLockRegistry.builder(client)
        .lossListener((key, lease) -> {
          lost.add(key + "#" + lease.fencingToken());
          told.countDown();
        })
        .build();
    Lock lock = registry.obtain("ledger");
    lock.lock();
    lock.lock(); // a re-entry is the same lease: one signal
    long token = registry.fencingToken("ledger").orElseThrow();

    assertThat(operator.forceUnlock("ledger")).isTrue();
    assertThat(told.await(10, TimeUnit.SECONDS)).as("loss signalled").isTrue();
    assertThat(lost).containsExactly("ledger#" + token);
    assertThat(registry.currentLease("ledger")).hasValueSatisfying(
        l -> assertThat(l.state()).isEqualTo(LeaseState.LOST));
    assertThatThrownBy(() -> registry.renewLock("ledger")).isInstanceOf(IllegalStateException.class);

    assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class)
        .hasMessageContaining("ledger");
    assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class);
    assertThat(registry.currentLease("ledger")).as("both holds dropped").isEmpty();
    assertThatThrownBy(lock::unlock).isInstanceOf(IllegalStateException.class);
    assertThat(lock.tryLock()).isTrue();
    lock.unlock();
    assertThat(lost).hasSize(1);
  }

  /** SI 7's ttl API, on both lines (LocksmithLock): a fixed lease of the ttl, and what renewLock(key, ttl) refuses. */
  @Test
  void ttlLocksTakeAFixedLeaseOfTheirTtlWhichARenewalCannotLengthen() throws Exception {
    LocksmithLockRegistry registry = new LocksmithLockRegistry(client);
    LocksmithLock lock = registry.obtain("ttl");
    lock.lock(java.time.Duration.ofSeconds(5));
    try {
      assertThat(registry.currentLease("ttl").orElseThrow().remainingValidity())
          .isLessThanOrEqualTo(java.time.Duration.ofSeconds(5));
      assertThatThrownBy(() -> registry.renewLock("ttl", java.time.Duration.ofSeconds(6)))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("its lease is PT5S long");
      registry.renewLock("ttl", java.time.Duration.ofSeconds(5));
      registry.renewLock("ttl", java.time.Duration.ofSeconds(1)); // shorter: met with the longer lease
      assertThatThrownBy(() -> registry.renewLock("ttl", java.time.Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> registry.renewLock("ttl", null)).isInstanceOf(NullPointerException.class);
      assertThat(onOtherThread(() -> registry.obtain("ttl").tryLock(java.time.Duration.ofMillis(50),
          java.time.Duration.ofSeconds(5)))).as("held by this thread").isFalse();
      assertThat(lock.tryLock(java.time.Duration.ZERO, java.time.Duration.ofSeconds(1))).as("re-entry").isTrue();
      lock.unlock();
    } finally {
      lock.unlock();
    }
    assertThat(operator.inspect("ttl")).isEmpty();
    assertThatThrownBy(() -> lock.lock(java.time.Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> lock.tryLock(null, java.time.Duration.ofSeconds(1))).isInstanceOf(NullPointerException.class);
    assertThat(operator.inspect("ttl")).as("nothing taken by the refused calls").isEmpty();
    assertThatThrownBy(() -> registry.renewLock("ttl", java.time.Duration.ofDays(1))).as("not held comes first")
        .isInstanceOf(IllegalStateException.class);
  }

  @Test
  void renewLockKeepsTheHoldCountAndToken() {
    LocksmithLockRegistry registry = new LocksmithLockRegistry(client);
    Lock lock = registry.obtain("renewed");
    lock.lock();
    long token = registry.fencingToken("renewed").orElseThrow();
    registry.renewLock("renewed");
    assertThat(registry.currentLease("renewed")).hasValueSatisfying(l -> {
      assertThat(l.holdCount()).isEqualTo(1);
      assertThat(l.fencingToken()).isEqualTo(token);
    });
    lock.unlock();
    assertThat(operator.inspect("renewed")).isEmpty();
  }

  @Test
  void aRenewalSchedulerIsAcceptedForWatchedLeasesAndRefusedForFixedOnes() {
    ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler(); // never started: it must not be used
    new LocksmithLockRegistry(client).setRenewalTaskScheduler(scheduler);
    LocksmithLockRegistry fixed = LocksmithLockRegistry.builder(client).fixedLease(Duration.ofSeconds(5)).build();
    assertThatThrownBy(() -> fixed.setRenewalTaskScheduler(scheduler)).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("watchedLease");
    assertThatThrownBy(() -> new LocksmithLockRegistry(client).setRenewalTaskScheduler(null))
        .isInstanceOf(NullPointerException.class);
  }

  @Test
  void theBuilderChecksEverySettingAtBuild() {
    assertThatThrownBy(() -> LocksmithLockRegistry.builder(null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> new LocksmithLockRegistry(null)).isInstanceOf(NullPointerException.class);
    LocksmithLockRegistry.Builder shortWatched = LocksmithLockRegistry.builder(client).watchedLease(Duration.ofMillis(50));
    assertThatThrownBy(shortWatched::build).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("watched lease");
    assertThatThrownBy(() -> LocksmithLockRegistry.builder(client).fixedLease(Duration.ofMillis(5)).build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> LocksmithLockRegistry.builder(client).fixedLease(Duration.ofDays(8)).build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> LocksmithLockRegistry.builder(client).fixedLease(null).build())
        .isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> LocksmithLockRegistry.builder(client).namePrefix(null).build())
        .isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> LocksmithLockRegistry.builder(client).namePrefix("bad\u0000").build())
        .isInstanceOf(IllegalArgumentException.class);

    assertThat(new LocksmithLockRegistry(client).lockOptions()).isEqualTo(client.options().defaultLockOptions());
    assertThat(LocksmithLockRegistry.builder(client).watchedLease(Duration.ofSeconds(3)).build().lockOptions())
        .isEqualTo(LockOptions.watched(Duration.ofSeconds(3)));
  }

  @Test
  void fairLocksNeedABackendThatHasThem() {
    Lock fair = LocksmithLockRegistry.builder(client).fair(true).build().obtain("queue");
    assertThat(fair.tryLock()).isTrue();
    assertThat(operator.fairLock("queue").inspect()).isPresent();
    fair.unlock();

    try (H2Database h2 = H2Database.inMemory();
        JdbcLockClient jdbc = JdbcLockClient.builder().dataSource(h2.dataSource()).createTableIfMissing()
            .mode(io.locksmith.jdbc.JdbcLockMode.ROW_LOCK).build()) {
      assertThat(jdbc.capabilities().supports(LockKind.FAIR)).as("precondition: the row-lock mode has no fair locks")
          .isFalse();
      assertThatThrownBy(() -> LocksmithLockRegistry.builder(jdbc).fair(true).build())
          .isInstanceOf(UnsupportedOperationException.class);
    }
  }

  @Test
  void keysBecomeLockNamesAfterThePrefix() {
    LocksmithLockRegistry registry = LocksmithLockRegistry.builder(client).namePrefix("orders:").build();
    Lock lock = registry.obtain("42");
    lock.lock();
    try {
      assertThat(operator.inspect("orders:42")).isPresent();
      assertThat(operator.inspect("42")).isEmpty();
    } finally {
      lock.unlock();
    }
    assertThatThrownBy(() -> new LocksmithLockRegistry(client).obtain(" ")).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aDroppedLockObjectKeepsExcluding() throws Exception {
    LocksmithLockRegistry registry = new LocksmithLockRegistry(client);
    Lock old = registry.obtain("shared");
    registry.expireUnusedOlderThan(0);
    Lock fresh = registry.obtain("shared");
    assertThat(fresh).isNotSameAs(old);
    old.lock();
    try {
      assertThat(onOtherThread(() -> fresh.tryLock()).booleanValue()).as("another thread, through the new object").isFalse();
      assertThat(fresh.tryLock()).as("the holding thread re-enters through either").isTrue();
      fresh.unlock();
    } finally {
      old.unlock();
    }
    assertThat(onOtherThread(() -> {
      boolean got = fresh.tryLock();
      if (got) {
        fresh.unlock();
      }
      return got;
    })).isTrue();
  }

  @Test
  void registriesOverOneClientShareTheThreadsHolds() {
    LocksmithLockRegistry one = new LocksmithLockRegistry(client);
    LocksmithLockRegistry two = new LocksmithLockRegistry(client);
    Lock a = one.obtain("same");
    a.lock();
    try {
      Lock b = two.obtain("same");
      assertThat(b.tryLock()).as("same client, same thread: a re-entry").isTrue();
      b.unlock();
      assertThat(operator.inspect("same")).as("still held by the outer hold").isPresent();
    } finally {
      a.unlock();
    }
    assertThat(operator.inspect("same")).isEmpty();
  }

  @Test
  void aClosedClientGivesNoLocks() {
    LockClient closing = server.newClient();
    LocksmithLockRegistry registry = new LocksmithLockRegistry(closing);
    closing.close();
    assertThatThrownBy(() -> registry.obtain("after-close")).isInstanceOf(IllegalStateException.class);
  }
}
