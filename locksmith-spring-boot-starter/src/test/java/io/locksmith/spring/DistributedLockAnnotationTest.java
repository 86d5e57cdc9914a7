package io.locksmith.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.Lease;
import io.locksmith.LockClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** {@link DistributedLock} on the in-JVM backend: names, kinds, re-entry, failure policies, tokens, futures. */
@Tag("unit")
class DistributedLockAnnotationTest {

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, LocksmithAutoConfiguration.class))
      .withPropertyValues("locksmith.backend=in-jvm", "locksmith.clients.other.backend=in-jvm")
      .withUserConfiguration(Beans.class);

  /** An order, for SpEL over an argument's property. */
  public record Order(String id) {}

  /** The shard bean that names refer to. */
  public static class Shard {
    public String name() {
      return "eu";
    }
  }

  /** The annotated service. */
  public static class Service {
    final AtomicInteger runs = new AtomicInteger();
    Service self;
    Inner inner;

    @DistributedLock(name = "#order.id")
    public String byProperty(Order order) {
      return LockedCall.currentLease().orElseThrow().lockName();
    }

    @DistributedLock(name = "sku:#{#p0}:#{@shard.name()}")
    public String byTemplate(String sku) {
      return LockedCall.currentLease().orElseThrow().lockName();
    }

    @DistributedLock(name = "nightly")
    public String literal() {
      return LockedCall.currentLease().orElseThrow().lockName();
    }

    @DistributedLock(name = "'k-' + #a0")
    public String expressionNeedsTemplateOrHash(String a) {
      return LockedCall.currentLease().orElseThrow().lockName();
    }

    @DistributedLock(name = "#p0")
    public int outer(String name) {
      return inner.nested(name);
    }

    @DistributedLock(name = "#p0", waitTime = "0")
    public String held(String name) {
      runs.incrementAndGet();
      return "ran";
    }

    @DistributedLock(name = "#p0", waitTime = "0", onFailure = DistributedLock.OnFailure.SKIP)
    public boolean skipped(String name) {
      runs.incrementAndGet();
      return true;
    }

    @DistributedLock(name = "#p0", waitTime = "0", onFailure = DistributedLock.OnFailure.SKIP)
    public Optional<String> skippedOptional(String name) {
      runs.incrementAndGet();
      return Optional.of("ran");
    }

    @DistributedLock(name = "#p0", waitTime = "0", onFailure = DistributedLock.OnFailure.FALLBACK, fallback = "busy")
    public String withFallback(String name) {
      runs.incrementAndGet();
      return "ran";
    }

    /** Read through a method: the test holds the CGLIB proxy, whose own fields are unset. */
    public int runCount() {
      return runs.get();
    }

    String busy(String name) {
      return "busy:" + name;
    }

    @DistributedLock(name = "#p0")
    public long[] tokens(String name, Lease lease) {
      return new long[] {LockedCall.fencingToken(), lease.fencingToken()};
    }

    @DistributedLock(name = "#p0", kind = DistributedLock.Kind.READ)
    public int readers(String name) {
      return inner.readCount(name);
    }

    @DistributedLock(name = "#p0", kind = DistributedLock.Kind.WRITE, waitTime = "0")
    public String write(String name) {
      return "wrote";
    }

    @DistributedLock(name = "#p0", kind = DistributedLock.Kind.FAIR, leaseTime = "2s", watched = false)
    public Duration fair(String name) {
      return LockedCall.currentLease().orElseThrow().remainingValidity();
    }

    @DistributedLock(name = "#p0", client = "other")
    public String onOther(String name) {
      return "other";
    }

    @DistributedLock(name = "#p0")
    public CompletableFuture<String> later(String name, CompletableFuture<String> result) {
      return result;
    }
  }

  /** A second bean, so that a nested call goes through the proxy. */
  public static class Inner {
    LockClient client;

    @DistributedLock(name = "#p0")
    public int nested(String name) {
      return client.lock(name).getHoldCount();
    }

    public int readCount(String name) {
      return client.readWriteLock(name).readLock().getHoldCount();
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class Beans {
    @Bean
    Shard shard() {
      return new Shard();
    }

    @Bean
    Inner inner(LockClient client) {
      Inner inner = new Inner();
      inner.client = client;
      return inner;
    }

    @Bean
    Service service(Inner inner) {
      Service s = new Service();
      s.inner = inner;
      return s;
    }
  }

  @Test
  void namesComeFromSpelOverArgumentsAndBeans() {
    runner.run(ctx -> {
      Service s = ctx.getBean(Service.class);
      assertThat(s.byProperty(new Order("o-17"))).isEqualTo("o-17");
      assertThat(s.byTemplate("A1")).isEqualTo("sku:A1:eu");
      assertThat(s.literal()).isEqualTo("nightly");
      // neither a template nor starting with # or @: taken literally
      assertThat(s.expressionNeedsTemplateOrHash("x")).isEqualTo("'k-' + #a0");
    });
  }

  @Test
  void nestedCallsOnTheSameNameReenter() {
    runner.run(ctx -> {
      assertThat(ctx.getBean(Service.class).outer("nested")).isEqualTo(2);
      assertThat(ctx.getBean(LockClient.class).inspect("nested")).isEmpty();
    });
  }

  @Test
  void byDefaultABusyLockThrowsLockNotAcquiredAndTheMethodDoesNotRun() throws Exception {
    runner.run(ctx -> {
      Service s = ctx.getBean(Service.class);
      try (Lease other = ctx.getBean(LockClient.class).lock("busy").acquire(Duration.ZERO)) {
        assertThatThrownBy(() -> s.held("busy")).isInstanceOf(LockNotAcquiredException.class)
            .hasMessageContaining("busy").satisfies(e -> assertThat(((LockNotAcquiredException) e).lockName()).isEqualTo("busy"));
      }
      assertThat(s.runCount()).isZero();
      assertThat(s.held("busy")).isEqualTo("ran");
    });
  }

  @Test
  void skipAndFallbackPoliciesDoNotRunTheMethod() {
    runner.run(ctx -> {
      Service s = ctx.getBean(Service.class);
      try (Lease other = ctx.getBean(LockClient.class).lock("busy").acquire(Duration.ZERO)) {
        assertThat(s.skipped("busy")).isFalse();
        assertThat(s.skippedOptional("busy")).isEmpty();
        assertThat(s.withFallback("busy")).isEqualTo("busy:busy");
      }
      assertThat(s.runCount()).isZero();
      assertThat(s.withFallback("busy")).isEqualTo("ran");
    });
  }

  @Test
  void theMethodSeesItsFencingTokenThroughTheAccessorAndALeaseParameter() {
    runner.run(ctx -> {
      Service s = ctx.getBean(Service.class);
      long[] first = s.tokens("fenced", null);
      long[] second = s.tokens("fenced", null);
      assertThat(first[0]).isPositive().isEqualTo(first[1]);
      assertThat(second[0]).isGreaterThan(first[0]).isEqualTo(second[1]);
      assertThat(LockedCall.currentLease()).isEmpty();
      assertThatThrownBy(LockedCall::fencingToken).isInstanceOf(IllegalStateException.class);
    });
  }

  @Test
  void readAndWriteKindsTakeTheSidesOfAReadWriteLock() throws Exception {
    runner.run(ctx -> {
      Service s = ctx.getBean(Service.class);
      assertThat(s.readers("rw")).isEqualTo(1);
      // a reader held elsewhere keeps the writer out
      try (Lease reader = ctx.getBean(LockClient.class).readWriteLock("rw").readLock().acquire(Duration.ZERO)) {
        assertThatThrownBy(() -> s.write("rw")).isInstanceOf(LockNotAcquiredException.class);
      }
      assertThat(s.write("rw")).isEqualTo("wrote");
      Duration remaining = s.fair("fair");
      assertThat(remaining).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(2));
    });
  }

  @Test
  void theClientAttributeChoosesANamedClient() {
    runner.run(ctx -> {
      LockClients clients = ctx.getBean(LockClients.class);
      try (Lease onDefault = clients.get("default").lock("shared-name").acquire(Duration.ZERO)) {
        // a separate in-JVM client has its own lock space, so the name is free there
        assertThat(ctx.getBean(Service.class).onOther("shared-name")).isEqualTo("other");
      }
    });
  }

  @Test
  void aFutureResultKeepsTheLockUntilItCompletes() {
    runner.run(ctx -> {
      Service s = ctx.getBean(Service.class);
      LockClient client = ctx.getBean(LockClient.class);
      CompletableFuture<String> work = new CompletableFuture<>();
      CompletableFuture<String> returned = s.later("async", work);
      assertThat(client.inspect("async")).as("held after the method returned").isPresent();
      work.complete("done");
      assertThat(returned).isCompletedWithValue("done");
      assertThat(client.inspect("async")).as("released when the result completed").isEmpty();

      CompletableFuture<String> failing = new CompletableFuture<>();
      s.later("async", failing);
      assertThat(client.inspect("async")).isPresent();
      failing.completeExceptionally(new IllegalStateException("boom"));
      assertThat(client.inspect("async")).isEmpty();
    });
  }

  @Test
  void lockTemplateReturnsWhatTheTaskReturnsAndReleases() {
    runner.run(ctx -> {
      LockTemplate template = ctx.getBean(LockTemplate.class);
      List<Integer> holds = new ArrayList<>();
      String result = template.callLocked("tpl", Duration.ofSeconds(1), () -> {
        holds.add(ctx.getBean(LockClient.class).lock("tpl").getHoldCount());
        return "value";
      });
      assertThat(result).isEqualTo("value");
      assertThat(holds).containsExactly(1);
      assertThat(ctx.getBean(LockClient.class).inspect("tpl")).isEmpty();
    });
  }
}
