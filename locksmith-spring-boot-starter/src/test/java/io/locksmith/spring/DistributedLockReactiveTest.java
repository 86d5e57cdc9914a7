package io.locksmith.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.Lease;
import io.locksmith.LockClient;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/** {@link DistributedLock} on methods returning {@code Mono}: locked from subscription to termination. */
@Tag("unit")
class DistributedLockReactiveTest {

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, LocksmithAutoConfiguration.class))
      .withPropertyValues("locksmith.backend=in-jvm")
      .withBean(Reactive.class, Reactive::new);

  /** The annotated reactive bean. */
  public static class Reactive {
    @DistributedLock(name = "#p0", waitTime = "0")
    public Mono<String> later(String name, Mono<String> work) {
      return work;
    }

    @DistributedLock(name = "#p0", waitTime = "0", onFailure = DistributedLock.OnFailure.SKIP)
    public Mono<String> skipped(String name) {
      return Mono.just("ran");
    }

    @DistributedLock(name = "#p0")
    public Mono<Long> token(String name, Lease lease) {
      return Mono.fromSupplier(lease::fencingToken);
    }
  }

  /** Waits (bounded) for what an asynchronous release makes true. */
  private static void await(BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as("condition not met within 10 s").isLessThan(deadline);
      Thread.sleep(5);
    }
  }

  /**
   * A body that blocks (here: four, as many as the client's completion threads) must not stall the client's other
   * asynchronous acquisitions: the body runs on Reactor's boundedElastic scheduler, not on the thread that
   * completed the acquisition.
   */
  @Test
  void blockingBodiesDoNotStallTheClientsAsyncAcquisitions() throws Exception {
    runner.run(ctx -> {
      Reactive r = ctx.getBean(Reactive.class);
      LockClient client = ctx.getBean(LockClient.class);
      java.util.concurrent.CountDownLatch entered = new java.util.concurrent.CountDownLatch(4);
      java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
      List<String> bodyThreads = new java.util.concurrent.CopyOnWriteArrayList<>();
      List<java.util.concurrent.CompletableFuture<String>> calls = new java.util.ArrayList<>();
      try {
        for (int i = 0; i < 4; i++) {
          String name = "blocking-" + i;
          calls.add(r.later(name, Mono.fromCallable(() -> {
            bodyThreads.add(Thread.currentThread().getName());
            entered.countDown();
            release.await(); // blocking code in a reactive body: what the scheduler change is for
            return name;
          })).toFuture());
        }
        assertThat(entered.await(10, java.util.concurrent.TimeUnit.SECONDS)).as("all four bodies started").isTrue();
        // failure deadline only: an acquisition of a free lock completes at once unless its completion thread is taken
        assertThat(client.lock("free").acquireAsync(Duration.ZERO).toCompletableFuture()
            .completeOnTimeout(null, 10, java.util.concurrent.TimeUnit.SECONDS).get())
            .as("async acquisition while four bodies block (bodies ran on %s)", bodyThreads).isNotNull()
            .satisfies(Lease::release);
      } finally {
        release.countDown();
      }
      for (java.util.concurrent.CompletableFuture<String> c : calls) {
        assertThat(c.get(10, java.util.concurrent.TimeUnit.SECONDS)).startsWith("blocking-");
      }
      assertThat(bodyThreads).allSatisfy(t -> assertThat(t).startsWith("boundedElastic"));
    });
  }

  @Test
  void theLockIsHeldFromSubscriptionUntilTheResultTerminates() throws Exception {
    runner.run(ctx -> {
      Reactive r = ctx.getBean(Reactive.class);
      LockClient client = ctx.getBean(LockClient.class);
      Sinks.One<String> work = Sinks.one();
      Mono<String> result = r.later("rx", work.asMono());
      assertThat(client.inspect("rx")).as("nothing happens before subscription").isEmpty();
      CompletableFuture<String> value = result.toFuture();
      await(() -> client.inspect("rx").isPresent());
      work.tryEmitValue("done");
      assertThat(value.get()).isEqualTo("done");
      await(() -> client.inspect("rx").isEmpty());
    });
  }

  @Test
  void aBusyLockFailsOrSkipsTheMonoAndTheLeaseIsBound() throws Exception {
    runner.run(ctx -> {
      Reactive r = ctx.getBean(Reactive.class);
      try (Lease other = ctx.getBean(LockClient.class).lock("busy").acquire(Duration.ZERO)) {
        assertThatThrownBy(() -> r.later("busy", Mono.just("x")).block(Duration.ofSeconds(10)))
            .isInstanceOf(LockNotAcquiredException.class);
        assertThat(r.skipped("busy").blockOptional(Duration.ofSeconds(10))).isEmpty();
      }
      Long token = r.token("t", null).block(Duration.ofSeconds(10));
      assertThat(token).isPositive();
    });
  }
}
