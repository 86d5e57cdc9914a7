package io.locksmith;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class FenceGuardTest {

  @Test
  void acceptsEqualAndLargerTokensAndRejectsSmallerOnesPerResource() {
    FenceGuard guard = new FenceGuard();
    assertThat(guard.highest("a")).isEmpty();
    assertThat(guard.apply("a", 5, () -> "w5")).isEqualTo("w5");
    assertThat(guard.apply("a", 5, () -> "again")).isEqualTo("again");
    guard.admit("a", 7);
    assertThatThrownBy(() -> guard.apply("a", 6, () -> {
      throw new AssertionError("a stale action must not run");
    })).isInstanceOfSatisfying(StaleTokenException.class, e -> {
      assertThat(e.resource()).isEqualTo("a");
      assertThat(e.token()).isEqualTo(6);
      assertThat(e.highestSeen()).isEqualTo(7);
      assertThat(e).isInstanceOf(LockException.class).hasMessageContaining("stale");
    });
    guard.admit("b", 1); // keys are independent
    assertThat(guard.highest("a")).hasValue(7);
    assertThat(guard.highest("b")).hasValue(1);
  }

  @Test
  void everyRefusalIsToldToTheListenerBeforeItIsThrown() {
    List<StaleTokenException> told = new ArrayList<>();
    FenceGuard guard = new FenceGuard(told::add);
    FenceGuard.Admission old = guard.admit("stock", 3);
    guard.admit("stock", 4);
    assertThatThrownBy(() -> old.run(() -> { })).isInstanceOf(StaleTokenException.class);
    assertThatThrownBy(() -> guard.admit("stock", 2)).isInstanceOf(StaleTokenException.class);
    guard.admit("stock", 4); // admitted: not told
    assertThat(told).extracting(StaleTokenException::token).containsExactly(3L, 2L);
    assertThat(told).extracting(StaleTokenException::resource).containsOnly("stock");
    assertThatThrownBy(() -> new FenceGuard(null)).isInstanceOf(NullPointerException.class);
  }

  @Test
  void aFailingActionDoesNotRaiseTheFence() {
    FenceGuard guard = new FenceGuard();
    guard.admit("a", 3);
    assertThatThrownBy(() -> guard.apply("a", 9, () -> {
      throw new IllegalStateException("disk full");
    })).isInstanceOf(IllegalStateException.class);
    assertThat(guard.highest("a")).hasValue(3);
    assertThatThrownBy(() -> guard.apply(null, 1, () -> 1)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> guard.apply("a", 1, null)).isInstanceOf(NullPointerException.class);
  }

  @Test
  void checkAndActionAreAtomicUnderContention() throws Exception {
    FenceGuard guard = new FenceGuard();
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger maxInside = new AtomicInteger();
    AtomicInteger rejected = new AtomicInteger();
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 8; t++) {
      int id = t;
      Thread thread = new Thread(() -> {
        try {
          start.await();
          for (int i = 0; i < 500; i++) {
            try {
              guard.apply("r", i * 8L + id + 1, () -> {
                maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                inside.decrementAndGet();
                return null;
              });
            } catch (StaleTokenException e) {
              rejected.incrementAndGet();
            }
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
      threads.add(thread);
      thread.start();
    }
    start.countDown();
    for (Thread t : threads) {
      t.join();
    }
    assertThat(maxInside.get()).isEqualTo(1);
    assertThat(guard.highest("r")).hasValue(499 * 8L + 8);
    assertThat(rejected.get()).isPositive();
  }
}
