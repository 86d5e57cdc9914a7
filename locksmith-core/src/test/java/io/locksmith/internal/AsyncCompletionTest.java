package io.locksmith.internal;

import io.locksmith.testkit.LogCapture;
import static io.locksmith.testkit.LogCapture.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.BackendUnavailableException;
import io.locksmith.ClientOptions;
import io.locksmith.DistributedLock;
import io.locksmith.Lease;
import io.locksmith.LeaseState;
import io.locksmith.LockClient;
import io.locksmith.LockOptions;
import io.locksmith.injvm.InJvmLockServer;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Where asynchronous results complete (issue 13 item 7). They used to complete on the common pool, which
 * on a machine with one or two CPUs has parallelism 1, so that {@code CompletableFuture} started a new
 * thread for every completion. Now a small pool the client owns, or the application's executor.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AsyncCompletionTest {
  private static final Duration WAIT = Duration.ofSeconds(10);

  private static <T> T await(java.util.concurrent.CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(20, TimeUnit.SECONDS);
  }

  @Test
  void dependentStagesRunOnTheClientsCompletionThreads() throws Exception {
    InJvmLockServer server = new InJvmLockServer();
    try (LockClient holder = server.newClient(); LockClient client = server.newClient()) {
      Lease held = holder.lock("queue").tryAcquire().orElseThrow();
      // attached before completion, so the stage runs where the future is completed
      CompletableFuture<String> thread = client.lock("queue").acquireAsync(WAIT)
          .thenApply(lease -> {
            lease.release();
            return Thread.currentThread().getName();
          }).toCompletableFuture();
      held.release();
      assertThat(thread.get(20, TimeUnit.SECONDS)).startsWith("locksmith-async-" + client.clientId() + "-");
    }
  }

  @Test
  void manyAsyncCompletionsStartOnlyAFewThreads() throws Exception {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    InJvmLockServer server = new InJvmLockServer();
    try (LockClient holder = server.newClient(); LockClient client = server.newClient()) {
      List<Lease> held = new ArrayList<>();
      for (int i = 0; i < 200; i++) {
        held.add(holder.lock("n" + i).tryAcquire().orElseThrow());
      }
      long before = threads.getTotalStartedThreadCount();
      List<CompletableFuture<Boolean>> done = new ArrayList<>();
      for (int i = 0; i < 200; i++) {
        done.add(client.lock("n" + i).acquireAsync(WAIT).thenApply(Lease::release).toCompletableFuture());
      }
      held.forEach(Lease::release); // each release completes one waiting acquisition
      for (CompletableFuture<Boolean> f : done) {
        assertThat(f.get(20, TimeUnit.SECONDS)).isTrue();
      }
      long started = threads.getTotalStartedThreadCount() - before;
      assertThat(started).as("threads started by 200 async completions")
          .isLessThanOrEqualTo(DefaultLockClient.COMPLETION_THREADS + 2);
    }
  }

  @Test
  void anApplicationExecutorIsUsedAndNotShutDown() throws Exception {
    ExecutorService app = Executors.newSingleThreadExecutor(r -> new Thread(r, "app-async"));
    try {
      InJvmLockServer server = new InJvmLockServer();
      try (LockClient holder = server.newClient();
          LockClient client = server.newClient(ClientOptions.builder().completionExecutor(app).build())) {
        Lease held = holder.lock("q").tryAcquire().orElseThrow();
        CompletableFuture<String> thread = client.lock("q").acquireAsync(WAIT)
            .thenApply(lease -> Thread.currentThread().getName()).toCompletableFuture();
        held.release();
        assertThat(thread.get(20, TimeUnit.SECONDS)).isEqualTo("app-async");
        Lease mine = client.lock("q2").tryAcquire().orElseThrow();
        CountDownLatch appBusy = new CountDownLatch(1);
        app.execute(() -> {
          try {
            appBusy.await(); // the release's completion queues behind this
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
        CompletableFuture<String> releasedOn = mine.releaseAsync()
            .thenApply(owned -> Thread.currentThread().getName()).toCompletableFuture();
        appBusy.countDown();
        assertThat(releasedOn.get(20, TimeUnit.SECONDS)).isEqualTo("app-async");
      }
      assertThat(app.isShutdown()).as("the application's executor outlives the client").isFalse();
      assertThat(Thread.getAllStackTraces().keySet().stream().map(Thread::getName))
          .noneMatch(n -> n.startsWith("locksmith-async-"));
    } finally {
      app.shutdownNow();
    }
  }

  @Test
  void releaseAsyncMeansWhatReleaseMeans() throws Exception {
    InJvmLockServer server = new InJvmLockServer();
    try (LockClient client = server.newClient(); LockClient other = server.newClient()) {
      DistributedLock lock = client.lock("r", LockOptions.watched(Duration.ofSeconds(30)));
      Lease lease = lock.tryAcquire().orElseThrow();
      assertThat(await(lease.releaseAsync())).isTrue();
      assertThat(lease.state()).isEqualTo(LeaseState.RELEASED);
      assertThat(other.inspect("r")).isEmpty();
      assertThat(await(lease.releaseAsync())).as("again: nothing to release").isFalse();

      Lease lost = lock.tryAcquire().orElseThrow();
      other.forceUnlock("r");
      assertThat(await(lost.releaseAsync())).as("lost before the release").isFalse();

      Lease cut = lock.tryAcquire().orElseThrow();
      server.setReachable(false);
      assertThatThrownBy(() -> await(cut.releaseAsync())).isInstanceOf(ExecutionException.class)
          .cause().isInstanceOf(BackendUnavailableException.class);
      assertThat(cut.state()).as("released locally; the server expires it").isEqualTo(LeaseState.RELEASED);
      server.setReachable(true);
    }
  }

  @Test
  void theClientsCompletionThreadsEndAtClose() throws Exception {
    InJvmLockServer server = new InJvmLockServer();
    LockClient client = server.newClient();
    String prefix = "locksmith-async-" + client.clientId();
    for (int i = 0; i < 10; i++) {
      assertThat(await(client.lock("c" + i).acquireAsync(WAIT).thenCompose(Lease::releaseAsync))).isTrue();
    }
    client.close();
    assertThat(eventually(Duration.ofSeconds(10), () -> Thread.getAllStackTraces().keySet().stream()
        .noneMatch(t -> t.getName().startsWith(prefix) && t.isAlive()))).isTrue();
  }

  @Test
  void closingFailsAWaitingAsyncAcquisitionOnTheCompletionThreads() throws Exception {
    InJvmLockServer server = new InJvmLockServer();
    try (LockClient holder = server.newClient()) {
      holder.lock("held").tryAcquire().orElseThrow();
      LockClient client = server.newClient();
      CompletableFuture<Lease> waiting = client.lock("held").acquireAsync(WAIT).toCompletableFuture();
      client.close();
      assertThatThrownBy(() -> waiting.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
          .cause().isInstanceOf(IllegalStateException.class);
    }
  }
}
