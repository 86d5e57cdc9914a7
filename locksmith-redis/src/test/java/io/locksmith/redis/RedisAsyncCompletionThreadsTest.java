package io.locksmith.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.Lease;
import io.locksmith.testkit.RedisServerExtension;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 13 item 7: on a 2-CPU machine under Java 17, 200 {@code acquireAsync} completions started 201
 * platform threads. The stages completed on the common pool, whose parallelism there is 1, and {@code
 * CompletableFuture} then runs every async task on a new thread. They now complete on the client's own
 * small pool, and dependent stages run there too, never on Lettuce's I/O threads.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisAsyncCompletionThreadsTest {
  @RegisterExtension
  static final RedisServerExtension REDIS = new RedisServerExtension();
  private static final int CALLS = 200;
  /** The client's pool (4) plus room for a Lettuce thread started late. */
  private static final int MAX_NEW_THREADS = 8;

  @Test
  void twoHundredAsyncCompletionsStartOnlyAFewThreadsAndDependentStagesRunOnTheClientsThreads()
      throws Exception {
    System.out.println("common pool parallelism here: " + ForkJoinPool.getCommonPoolParallelism());
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    try (RedisLockClient holder = RedisLockClient.create(REDIS.server().uri());
        RedisLockClient client = RedisLockClient.create(REDIS.server().uri())) {
      // both clients' Lettuce threads are running before counting
      client.lock("warm-up").acquireAsync(Duration.ofSeconds(5)).thenCompose(Lease::releaseAsync)
          .toCompletableFuture().get(20, TimeUnit.SECONDS);
      List<Lease> held = new ArrayList<>();
      for (int i = 0; i < CALLS; i++) {
        held.add(holder.lock("async-" + i).acquire(Duration.ofSeconds(5)));
      }

      long before = threads.getTotalStartedThreadCount();
      Set<String> stageThreads = ConcurrentHashMap.newKeySet();
      List<CompletableFuture<Lease>> waiting = new ArrayList<>();
      for (int i = 0; i < CALLS; i++) {
        // attached while the acquisition waits: runs on the thread that completes it
        waiting.add(client.lock("async-" + i).acquireAsync(Duration.ofSeconds(60)).thenApply(lease -> {
          stageThreads.add(Thread.currentThread().getName());
          return lease;
        }).toCompletableFuture());
      }
      for (Lease lease : held) {
        lease.release(); // wakes the waiter of that lock
      }
      List<CompletableFuture<Boolean>> released = new ArrayList<>();
      for (CompletableFuture<Lease> f : waiting) {
        released.add(f.get(60, TimeUnit.SECONDS).releaseAsync().toCompletableFuture());
      }
      for (CompletableFuture<Boolean> r : released) {
        assertThat(r.get(20, TimeUnit.SECONDS)).isTrue();
      }
      long started = threads.getTotalStartedThreadCount() - before;
      System.out.println(CALLS + " async completions started " + started + " thread(s); stages ran on "
          + stageThreads);

      assertThat(started).as("threads started by %d async completions", CALLS).isLessThanOrEqualTo(MAX_NEW_THREADS);
      assertThat(stageThreads).as("dependent stages without an executor")
          .allMatch(n -> n.startsWith("locksmith-async-" + client.clientId() + "-"))
          .noneMatch(n -> n.startsWith("lettuce-"));
    }
  }
}
