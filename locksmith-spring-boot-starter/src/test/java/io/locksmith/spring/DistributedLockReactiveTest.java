package io.locksmith.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.Lease;
import io.locksmith.LockClient;
import java.time.Duration;
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
