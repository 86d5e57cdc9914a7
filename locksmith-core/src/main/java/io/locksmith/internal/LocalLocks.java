package io.locksmith.internal;

import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;

/**
 * The JVM-local locks behind degradation: one non-reentrant permit per key ({@code namespace NUL name}),
 * shared by every client in the JVM, handed to waiters in arrival order. Waiting is asynchronous (a
 * future per waiter) so that the async acquisitions of a degradable lock never block a thread. A key
 * nobody holds or waits for takes no memory. Thread-safe: each key's state changes atomically inside
 * {@link ConcurrentHashMap#compute}; futures are completed outside it.
 */
final class LocalLocks {
  private static final ConcurrentHashMap<String, Slot> SLOTS = new ConcurrentHashMap<>();

  private LocalLocks() {}

  /** A held permit and its queue; only touched inside {@code compute} on its key. */
  private static final class Slot {
    final ArrayDeque<CompletableFuture<Boolean>> waiters = new ArrayDeque<>();
  }

  /**
   * Asks for the permit of {@code key}.
   *
   * @param waitNanos how long to wait; 0 tries once, {@link Long#MAX_VALUE} waits without bound
   * @param timers where the deadline is scheduled
   * @return completes with {@code true} once the permit is the caller's (release it with {@link
   *     #release}), or {@code false} when the wait ran out or the wait was {@linkplain #abandon abandoned}
   */
  static CompletableFuture<Boolean> acquire(String key, long waitNanos, DefaultLockClient timers) {
    CompletableFuture<Boolean> waiter = new CompletableFuture<>();
    boolean[] granted = new boolean[1];
    SLOTS.compute(key, (k, slot) -> {
      if (slot == null) {
        granted[0] = true;
        return new Slot();
      }
      if (waitNanos > 0) {
        slot.waiters.add(waiter);
      }
      return slot;
    });
    if (granted[0] || waitNanos == 0) {
      waiter.complete(granted[0]);
      return waiter;
    }
    if (waitNanos != Long.MAX_VALUE) {
      ScheduledFuture<?> deadline = timers.schedule(() -> abandon(key, waiter), waitNanos);
      waiter.whenComplete((v, e) -> deadline.cancel(false));
    }
    return waiter;
  }

  /**
   * Ends a wait: completes the waiter with {@code false} unless it was granted already (then the permit
   * is the waiter's, and whoever handles its completion must release it).
   */
  static void abandon(String key, CompletableFuture<Boolean> waiter) {
    if (waiter.complete(false)) {
      SLOTS.computeIfPresent(key, (k, slot) -> {
        slot.waiters.remove(waiter);
        return slot;
      });
    }
  }

  /** Gives the permit of {@code key} to the longest waiter still waiting, or frees it. */
  static void release(String key) {
    while (true) {
      @SuppressWarnings("unchecked")
      CompletableFuture<Boolean>[] next = new CompletableFuture[1];
      SLOTS.computeIfPresent(key, (k, slot) -> {
        CompletableFuture<Boolean> w;
        do {
          w = slot.waiters.poll();
        } while (w != null && w.isDone());
        next[0] = w;
        return w == null ? null : slot; // null: nobody waits, the permit is free
      });
      if (next[0] == null || next[0].complete(true)) {
        return;
      }
      // that waiter gave up between the poll and the hand-over: the permit is still ours to pass on
    }
  }

  /** @return whether the permit of {@code key} is held by someone in this JVM (for tests and logs) */
  static boolean isHeld(String key) {
    return SLOTS.containsKey(key);
  }
}
