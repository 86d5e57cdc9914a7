package io.locksmith.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Many concurrent callers of one {@link DistributedLock} method: never two inside at once, every call
 * runs. On a pool of platform threads, and with one thread per call: virtual threads where the JDK has
 * them (21+).
 */
@Tag("unit")
class DistributedLockThreadsTest {

  private static final int CALLS = 200;

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, LocksmithAutoConfiguration.class))
      .withPropertyValues("locksmith.backend=in-jvm", "locksmith.annotation.wait-time=60s")
      .withUserConfiguration(Beans.class);

  /** Counts calls and how many were inside at once. */
  public static class Counter {
    private final AtomicInteger inside = new AtomicInteger();
    private final AtomicInteger maxInside = new AtomicInteger();
    private final AtomicInteger onVirtualThreads = new AtomicInteger();
    private int calls; // guarded by the distributed lock only

    @DistributedLock(name = "counter")
    public void increment() {
      if (isVirtual(Thread.currentThread())) {
        onVirtualThreads.incrementAndGet();
      }
      int now = inside.incrementAndGet();
      maxInside.accumulateAndGet(now, Math::max);
      Thread.yield();
      calls++;
      inside.decrementAndGet();
    }

    public int calls() {
      return calls;
    }

    public int maxInside() {
      return maxInside.get();
    }

    public int onVirtualThreads() {
      return onVirtualThreads.get();
    }
  }

  private static boolean isVirtual(Thread thread) {
    try {
      return (Boolean) Thread.class.getMethod("isVirtual").invoke(thread);
    } catch (ReflectiveOperationException beforeJava21) {
      return false;
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class Beans {
    @Bean
    Counter counter() {
      return new Counter();
    }
  }

  @Test
  void platformThreadsAreExcluded() {
    runner.run(ctx -> hammer(ctx.getBean(Counter.class), Executors.newFixedThreadPool(16)));
  }

  /**
   * One thread per call, as a virtual-thread server runs them: virtual threads where the JDK has them
   * (21+; CI's JDK 17 runs the same test on one platform thread per call). Run on Temurin 25 with
   * {@code -Djvm=<jdk25>/bin/java} to cover virtual threads.
   */
  @Test
  void aThreadPerCallIsExcludedOnVirtualThreadsWhereTheJdkHasThem() {
    runner.run(ctx -> {
      Counter counter = ctx.getBean(Counter.class);
      hammer(counter, threadPerTask());
      // on JDK 21+ every call really ran on a virtual thread; on 17 none could
      assertThat(counter.onVirtualThreads()).as("calls on virtual threads, JDK %d", Runtime.version().feature())
          .isEqualTo(Runtime.version().feature() >= 21 ? CALLS : 0);
    });
  }

  private static ExecutorService threadPerTask() throws Exception {
    try {
      // reflection: the build targets Java 17, where this method does not exist
      return (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
    } catch (NoSuchMethodException beforeJava21) {
      return Executors.newCachedThreadPool();
    }
  }

  private static void hammer(Counter counter, ExecutorService pool) throws Exception {
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int i = 0; i < CALLS; i++) {
        futures.add(pool.submit(counter::increment));
      }
      for (Future<?> f : futures) {
        f.get(60, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(counter.maxInside()).isEqualTo(1);
    assertThat(counter.calls()).isEqualTo(CALLS);
  }
}
