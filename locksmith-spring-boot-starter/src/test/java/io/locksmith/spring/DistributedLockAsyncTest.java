package io.locksmith.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.LockClient;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.autoconfigure.task.TaskExecutionAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.EnableAsync;

/** {@code @Async} + {@link DistributedLock}: the lock is taken on the executor's thread and held until the work ends. */
@Tag("unit")
class DistributedLockAsyncTest {

  /** The async bean. */
  public static class Worker {
    @Async
    @DistributedLock(name = "#p0")
    public CompletableFuture<String> work(String name, CountDownLatch started, CountDownLatch finish) throws InterruptedException {
      String thread = Thread.currentThread().getName();
      started.countDown();
      assertThat(finish.await(30, TimeUnit.SECONDS)).isTrue();
      return CompletableFuture.completedFuture(thread + ":" + LockedCall.fencingToken());
    }
  }

  @Configuration(proxyBeanMethods = false)
  @EnableAsync
  static class AsyncOn {}

  @Test
  void theLockIsHeldOnTheExecutorThreadUntilTheWorkEnds() {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, TaskExecutionAutoConfiguration.class,
            LocksmithAutoConfiguration.class))
        .withPropertyValues("locksmith.backend=in-jvm")
        .withUserConfiguration(AsyncOn.class).withBean(Worker.class, Worker::new)
        .run(ctx -> {
          LockClient client = ctx.getBean(LockClient.class);
          CountDownLatch started = new CountDownLatch(1);
          CountDownLatch finish = new CountDownLatch(1);
          CompletableFuture<String> result = ctx.getBean(Worker.class).work("async-job", started, finish);
          assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
          assertThat(client.inspect("async-job")).as("held while the work runs").isPresent();
          finish.countDown();
          String done = result.get(30, TimeUnit.SECONDS);
          assertThat(done).doesNotStartWith(Thread.currentThread().getName() + ":");
          assertThat(Long.parseLong(done.substring(done.lastIndexOf(':') + 1))).isPositive();
          assertThat(client.inspect("async-job")).as("released when the work ended").isEmpty();
        });
  }
}
