package io.locksmith.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.redis.RedisLockClient;
import io.locksmith.testkit.RedisServerExtension;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * What a team migrating from another ShedLock provider runs: two instances of one application (two Spring
 * contexts, as two JVMs would have) with {@code @EnableSchedulerLock} and two {@code @SchedulerLock} jobs
 * on the same every-second cron, sharing one Redis through the adapter. Each job runs once per tick, on one
 * instance or the other, never on both, and each run has its own, larger fencing token.
 */
class TwoInstancesSchedulerLockTest {
  @RegisterExtension
  static final RedisServerExtension REDIS = new RedisServerExtension();

  private static final int TICKS = 4;
  private static final Map<String, List<Run>> RUNS = new ConcurrentHashMap<>();
  private static final Map<String, AtomicInteger> RUNNING = new ConcurrentHashMap<>();
  private static final Map<String, CountDownLatch> ENOUGH = new ConcurrentHashMap<>();

  record Run(String job, String instance, long tickSecond, OptionalLong token, int runningAtOnce, String thread) {}

  /** One application instance: its own Redis client and provider, the same jobs. */
  @Configuration
  @EnableScheduling
  @EnableSchedulerLock(defaultLockAtMostFor = "PT10S")
  static class Application {
    @Bean(destroyMethod = "close")
    RedisLockClient lockClient() {
      return RedisLockClient.create(REDIS.server().uri());
    }

    @Bean(destroyMethod = "close")
    LocksmithLockProvider lockProvider(RedisLockClient lockClient) {
      return new LocksmithLockProvider(lockClient);
    }

    /**
     * The instance's scheduler: stopped by the test before its context closes, waiting for a job that is
     * running (its unlock included) and firing no tick after that.
     */
    @Bean
    ThreadPoolTaskScheduler taskScheduler(InstanceName name) {
      ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler();
      scheduler.setThreadNamePrefix(name.value() + "-scheduler-");
      scheduler.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
      scheduler.setWaitForTasksToCompleteOnShutdown(true);
      scheduler.setAwaitTerminationSeconds(10);
      return scheduler;
    }

    @Bean
    Jobs jobs(InstanceName name) {
      return new Jobs(name.value());
    }
  }

  record InstanceName(String value) {}

  /** The scheduled jobs; lockAtLeastFor covers the skew between the two instances' schedulers. */
  static class Jobs {
    private final String instance;

    Jobs(String instance) {
      this.instance = instance;
    }

    @Scheduled(cron = "* * * * * *")
    @SchedulerLock(name = "nightly-report", lockAtLeastFor = "PT0.8S")
    public void report() {
      record("nightly-report", instance);
    }

    @Scheduled(cron = "* * * * * *")
    @SchedulerLock(name = "cleanup", lockAtLeastFor = "PT0.8S")
    public void cleanup() {
      record("cleanup", instance);
    }
  }

  private static void record(String job, String instance) {
    long tick = Instant.now().getEpochSecond();
    int atOnce = RUNNING.computeIfAbsent(job, j -> new AtomicInteger()).incrementAndGet();
    try {
      RUNS.computeIfAbsent(job, j -> new CopyOnWriteArrayList<>())
          .add(new Run(job, instance, tick, LocksmithLockProvider.currentFencingToken(), atOnce,
              Thread.currentThread().getName()));
      ENOUGH.get(job).countDown();
    } finally {
      RUNNING.get(job).decrementAndGet();
    }
  }

  private static AnnotationConfigApplicationContext start(String instance) {
    AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
    context.registerBean(InstanceName.class, () -> new InstanceName(instance));
    context.register(Application.class);
    context.refresh();
    return context;
  }

  @Test
  void eachJobRunsOncePerTickAcrossTwoInstances() throws Exception {
    for (String job : List.of("nightly-report", "cleanup")) {
      ENOUGH.put(job, new CountDownLatch(TICKS));
    }
    try (AnnotationConfigApplicationContext first = start("instance-a");
        AnnotationConfigApplicationContext second = start("instance-b")) {
      for (CountDownLatch enough : ENOUGH.values()) {
        assertThat(enough.await(TICKS + 10, TimeUnit.SECONDS)).as("%d runs of each job", TICKS).isTrue();
      }
      // Both schedulers stop before either context closes: closing a client releases the leases of jobs
      // still running (they are cut short), after which the other instance may run them again in the same
      // tick. What an instance's shutdown does to a job that already ran is LocksmithLockProviderTest's
      // aLockKeptForLockAtLeastForOutlivesTheInstanceThatRanTheJob.
      first.getBean(ThreadPoolTaskScheduler.class).shutdown();
      second.getBean(ThreadPoolTaskScheduler.class).shutdown();
    }
    for (String job : List.of("nightly-report", "cleanup")) {
      List<Run> runs = new ArrayList<>(RUNS.get(job));
      assertThat(runs).as("%s runs", job).hasSizeGreaterThanOrEqualTo(TICKS);
      Map<Long, List<Run>> byTick = runs.stream().collect(Collectors.groupingBy(Run::tickSecond));
      assertThat(byTick.values()).as("%s: one run per tick, never two", job).allSatisfy(r -> assertThat(r).hasSize(1));
      assertThat(runs).as("%s: never on both instances at once", job).allSatisfy(r -> assertThat(r.runningAtOnce()).isEqualTo(1));
      assertThat(runs).as("%s: run by the scheduler the test stops", job)
          .allSatisfy(r -> assertThat(r.thread()).startsWith(r.instance() + "-scheduler-"));
      assertThat(runs).as("%s: each run fenced", job).allSatisfy(r -> assertThat(r.token()).isPresent());
      List<Long> tokens = runs.stream().map(r -> r.token().getAsLong()).toList();
      assertThat(tokens).as("%s: each run's token larger than the last", job).isSorted().doesNotHaveDuplicates();
    }
  }
}
