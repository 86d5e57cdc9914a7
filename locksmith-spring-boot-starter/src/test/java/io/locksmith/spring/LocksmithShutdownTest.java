package io.locksmith.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.Lease;
import io.locksmith.LeaseState;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/** Shutdown waits, within a bound, for locked calls in flight, then releases their leases and says so. */
@Tag("unit")
@ExtendWith(OutputCaptureExtension.class)
class LocksmithShutdownTest {

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, LocksmithAutoConfiguration.class))
      .withPropertyValues("locksmith.backend=in-jvm")
      .withBean(Job.class, Job::new);

  /** A locked call that runs until told to finish. */
  public static class Job {
    final AtomicReference<Lease> lease = new AtomicReference<>();

    @DistributedLock(name = "#p0")
    public String run(String name, CountDownLatch started, CountDownLatch finish) throws InterruptedException {
      lease.set(LockedCall.currentLease().orElseThrow());
      started.countDown();
      return finish.await(30, TimeUnit.SECONDS) ? "done" : "timed out";
    }

    /** Through the proxy: the field is the target's. */
    public Lease lease() {
      return lease.get();
    }
  }

  /** Waits, bounded, for a condition another thread makes true. */
  private static void await(BooleanSupplier condition) {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as("condition not met within 30 s").isLessThan(deadline);
      LockSupport.parkNanos(Duration.ofMillis(5).toNanos());
    }
  }

  @Test
  void shutdownWaitsForTheCallInFlight(CapturedOutput output) {
    runner.run(ctx -> {
      Job job = ctx.getBean(Job.class);
      CountDownLatch started = new CountDownLatch(1);
      CountDownLatch finish = new CountDownLatch(1);
      CompletableFuture<String> call = CompletableFuture.supplyAsync(() -> {
        try {
          return job.run("nightly", started, finish);
        } catch (InterruptedException e) {
          throw new IllegalStateException(e);
        }
      });
      assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
      CompletableFuture<Void> closed = CompletableFuture.runAsync(ctx::close);
      await(() -> output.getAll().contains("waiting up to PT30S for 1 locked call(s) in flight"));
      assertThat(closed).as("the close waits for the call").isNotDone();
      assertThat(job.lease().state()).isEqualTo(LeaseState.HELD);
      finish.countDown();
      assertThat(call.get(30, TimeUnit.SECONDS)).isEqualTo("done");
      closed.get(30, TimeUnit.SECONDS);
      assertThat(job.lease().state()).isEqualTo(LeaseState.RELEASED);
    });
    assertThat(output.getAll()).doesNotContain("WITHOUT the lock");
  }

  @Test
  void afterTheBoundTheLeaseIsReleasedAndTheShutdownSaysSo(CapturedOutput output) {
    runner.withPropertyValues("locksmith.annotation.shutdown-wait=100ms").run(ctx -> {
      Job job = ctx.getBean(Job.class);
      CountDownLatch started = new CountDownLatch(1);
      CountDownLatch finish = new CountDownLatch(1);
      CompletableFuture<String> call = CompletableFuture.supplyAsync(() -> {
        try {
          return job.run("report", started, finish);
        } catch (InterruptedException e) {
          throw new IllegalStateException(e);
        }
      });
      assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
      ctx.close();
      assertThat(job.lease().state()).as("released by the shutdown").isEqualTo(LeaseState.RELEASED);
      assertThat(output.getAll()).contains("call on lock 'report' still running after PT0.1S", "WITHOUT the lock");
      finish.countDown();
      assertThat(call.get(30, TimeUnit.SECONDS)).as("the call itself ends normally").isEqualTo("done");
    });
  }
}
