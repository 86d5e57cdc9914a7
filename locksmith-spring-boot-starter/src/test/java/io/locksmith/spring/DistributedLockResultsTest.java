package io.locksmith.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.Lease;
import io.locksmith.LockClient;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.aopalliance.intercept.MethodInterceptor;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.aop.Advisor;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;
import org.springframework.core.Ordered;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * Results that outlive the call: a future keeps the lock until the method's own work completes, whatever
 * the caller does with the future it got; each subscription to a {@code Mono} takes the lock afresh and
 * passes through the advisors inside it; a {@code Flux} is locked for the whole stream.
 */
@Tag("unit")
class DistributedLockResultsTest {

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, LocksmithAutoConfiguration.class))
      .withPropertyValues("locksmith.backend=in-jvm")
      .withUserConfiguration(Beans.class);

  /** The annotated service. */
  public static class Service {
    final ExecutorService pool = Executors.newCachedThreadPool();

    @DistributedLock(name = "#p0")
    public CompletableFuture<String> work(String name, CountDownLatch finish) {
      return CompletableFuture.supplyAsync(() -> {
        try {
          return finish.await(30, TimeUnit.SECONDS) ? "work" : "timed out";
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return "interrupted";
        }
      }, pool);
    }

    @DistributedLock(name = "#p0")
    public Mono<String> lease(String name, Lease lease) {
      return Mono.fromSupplier(() -> lease.state() + ":" + lease.fencingToken());
    }

    @DistributedLock(name = "#p0")
    public Flux<String> stream(String name, Flux<String> items) {
      return items;
    }
  }

  /** Counts the passes through an advisor ordered inside the lock (as {@code @Transactional} is). */
  @Configuration(proxyBeanMethods = false)
  static class Beans {
    static final AtomicInteger INNER = new AtomicInteger();

    @Bean
    Service service() {
      return new Service();
    }

    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE) // as the transaction advisor: the infrastructure auto-proxy creator sees it
    static Advisor innerAdvisor() {
      DefaultPointcutAdvisor a = new DefaultPointcutAdvisor(AnnotationMatchingPointcut.forMethodAnnotation(DistributedLock.class),
          (MethodInterceptor) invocation -> {
            INNER.incrementAndGet();
            return invocation.proceed();
          });
      a.setOrder(Ordered.LOWEST_PRECEDENCE);
      return a;
    }
  }

  @Test
  void theCallersFutureDoesNotReleaseTheLockOfTheWork() {
    runner.run(ctx -> {
      Service s = ctx.getBean(Service.class);
      LockClient client = ctx.getBean(LockClient.class);
      CountDownLatch finish = new CountDownLatch(1);
      CompletableFuture<String> completed = s.work("cf-complete", finish);
      CompletableFuture<String> cancelled = s.work("cf-cancel", finish);
      CompletableFuture<String> timedOut = s.work("cf-timeout", finish).orTimeout(1, TimeUnit.MILLISECONDS);
      completed.complete("the caller's");
      cancelled.cancel(true);
      assertThat(timedOut).failsWithin(Duration.ofSeconds(30));
      assertThat(client.inspect("cf-complete")).as("held after the caller completed its future").isPresent();
      assertThat(client.inspect("cf-cancel")).as("held after the caller cancelled its future").isPresent();
      assertThat(client.inspect("cf-timeout")).as("held after the caller's orTimeout").isPresent();
      finish.countDown();
      // released when the work completes: each of these waits (bounded) for that release
      for (String name : List.of("cf-complete", "cf-cancel", "cf-timeout")) {
        client.lock(name).acquire(Duration.ofSeconds(30)).close();
      }
      assertThat(completed.join()).isEqualTo("the caller's");
      CompletableFuture<String> plain = s.work("cf-plain", finish);
      assertThat(plain.get(30, TimeUnit.SECONDS)).isEqualTo("work");
      assertThat(client.inspect("cf-plain")).as("released before the caller sees the result").isEmpty();
    });
  }

  @Test
  void eachMonoSubscriptionTakesTheLockAndPassesTheInnerAdvisors() {
    runner.run(ctx -> {
      Service s = ctx.getBean(Service.class);
      Beans.INNER.set(0);
      Mono<String> once = s.lease("rx-again", null);
      String first = once.block(Duration.ofSeconds(10));
      String second = once.block(Duration.ofSeconds(10));
      assertThat(first).startsWith("HELD:");
      assertThat(second).as("the second subscription's lease").startsWith("HELD:").isNotEqualTo(first);
      assertThat(Beans.INNER.get()).as("passes through the inner advisor").isEqualTo(2);
      assertThat(s.lease("rx-retry", null).repeat(2).collectList().block(Duration.ofSeconds(10))).doesNotHaveDuplicates()
          .allSatisfy(v -> assertThat(v).startsWith("HELD:"));
    });
  }

  @Test
  void aSubscriptionCancelledWhileItsAcquisitionWaitsDoesNotLeakTheLease() {
    runner.run(ctx -> {
      Service s = ctx.getBean(Service.class);
      LockClient client = ctx.getBean(LockClient.class);
      Lease other = client.lock("rx-cancel").acquire(Duration.ZERO);
      // waits (default wait-time 5 s) behind the other holder; cancelled before it gets the lock
      s.lease("rx-cancel", null).subscribe().dispose();
      other.release();
      // the pending acquisition still gets the lock a moment later: it must give it back at once
      client.lock("rx-cancel").acquire(Duration.ofSeconds(30)).close();
    });
  }

  @Test
  void aFluxIsLockedForTheWholeStream() throws Exception {
    runner.run(ctx -> {
      Service s = ctx.getBean(Service.class);
      LockClient client = ctx.getBean(LockClient.class);
      Sinks.Many<String> items = Sinks.many().unicast().onBackpressureBuffer();
      Flux<String> stream = s.stream("flux", items.asFlux());
      assertThat(client.inspect("flux")).as("nothing before subscription").isEmpty();
      CountDownLatch first = new CountDownLatch(1);
      CompletableFuture<List<String>> all = stream.doOnNext(v -> first.countDown()).collectList().toFuture();
      items.tryEmitNext("a");
      assertThat(first.await(30, TimeUnit.SECONDS)).isTrue();
      assertThat(client.inspect("flux")).as("held while the stream runs").isPresent();
      items.tryEmitNext("b");
      items.tryEmitComplete();
      assertThat(all.get(30, TimeUnit.SECONDS)).containsExactly("a", "b");
      client.lock("flux").acquire(Duration.ofSeconds(30)).close();
    });
  }
}
