package io.locksmith.spring;

import static io.locksmith.spring.DistributedLockNameTest.messages;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * What the start-up refuses or reports instead of running silently wrong: unknown properties, annotated
 * methods without a client, methods the proxy cannot advise; and no secret in any of it.
 */
@Tag("unit")
@ExtendWith(OutputCaptureExtension.class)
class LocksmithStartupChecksTest {

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, LocksmithAutoConfiguration.class));

  /** One locked method on the primary client. */
  public static class Job {
    @DistributedLock(name = "nightly")
    public void run() {}
  }

  /** One locked method on a named client. */
  public static class OrdersJob {
    @DistributedLock(name = "nightly", client = "orders")
    public void run() {}
  }

  /** Methods a class-based proxy cannot intercept. */
  public static class Unadvisable {
    @DistributedLock(name = "final")
    public final void finalMethod() {}

    @DistributedLock(name = "private")
    private void privateMethod() {}

    @DistributedLock(name = "fine")
    public void fine() {}

    void usePrivate() {
      privateMethod();
    }
  }

  /** A locked method called through this. */
  public static class SelfCalling {
    @DistributedLock(name = "inner")
    public void inner() {}

    public void outer() {
      inner();
    }
  }

  @Test
  void selfInvocationIsReportedAtStartUp(CapturedOutput output) {
    runner.withPropertyValues("locksmith.backend=in-jvm").withBean(SelfCalling.class, SelfCalling::new).run(ctx -> {
      assertThat(ctx).hasNotFailed();
      assertThat(output.getAll()).contains("SelfCalling.inner()", "called directly by outer");
    });
  }

  @Test
  void redlockNodePasswordsAppearNowhereInTheFailure(CapturedOutput output) {
    runner.withPropertyValues("locksmith.redlock.nodes=redis://:s3cret-pw@localhost:1,redis://:s3cret-pw@localhost:2").run(ctx -> {
      assertThat(ctx).hasFailed();
      assertThat(messages(ctx.getStartupFailure())).contains("locksmith.redlock.nodes").doesNotContain("s3cret-pw");
    });
    assertThat(output.getAll()).doesNotContain("s3cret-pw");
  }

  @Test
  void aMisspeltPropertyFailsTheStartUpNamingItAndTheNearestValidOne(CapturedOutput output) {
    runner.withPropertyValues("locksmith.redis.url=redis://:pw-in-typo@localhost:6379").run(ctx -> {
      assertThat(ctx).hasFailed();
      assertThat(messages(ctx.getStartupFailure())).contains("locksmith.redis.url", "locksmith.redis.uri")
          .doesNotContain("pw-in-typo");
    });
    runner.withPropertyValues("locksmith.backend=in-jvm", "locksmith.clients.orders.backend=in-jvm",
        "locksmith.clients.orders.lease-tme=5s").run(ctx -> {
          assertThat(ctx).hasFailed();
          assertThat(messages(ctx.getStartupFailure())).contains("locksmith.clients.orders.lease-tme",
              "locksmith.clients.orders.lease-time");
        });
    assertThat(output.getAll()).doesNotContain("pw-in-typo");
  }

  @Test
  void annotatedMethodsWithoutTheirClientFailTheStartUpSayingWhatToConfigure() {
    runner.withBean(Job.class, Job::new).run(ctx -> {
      assertThat(ctx).hasFailed();
      assertThat(messages(ctx.getStartupFailure())).contains("Job.run", "locksmith.backend");
    });
    runner.withPropertyValues("locksmith.backend=in-jvm").withBean(OrdersJob.class, OrdersJob::new).run(ctx -> {
      assertThat(ctx).hasFailed();
      assertThat(messages(ctx.getStartupFailure())).contains("OrdersJob.run", "locksmith.clients.orders");
    });
    runner.withPropertyValues("locksmith.backend=in-jvm").withBean(Job.class, Job::new).run(ctx -> assertThat(ctx).hasNotFailed());
  }

  @Test
  void methodsTheProxyCannotAdviseAreReportedAtStartUp(CapturedOutput output) {
    runner.withPropertyValues("locksmith.backend=in-jvm").withBean(Unadvisable.class, Unadvisable::new).run(ctx -> {
      assertThat(ctx).hasNotFailed();
      assertThat(output.getAll()).contains("Unadvisable.finalMethod", "final", "Unadvisable.privateMethod", "private")
          .doesNotContain("Unadvisable.fine()");
    });
  }
}
