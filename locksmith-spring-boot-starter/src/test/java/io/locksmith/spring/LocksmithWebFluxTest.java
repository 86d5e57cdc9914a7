package io.locksmith.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.Lease;
import io.locksmith.LockClient;
import java.time.Duration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * In a WebFlux application, a lock not obtained is a 409 ProblemDetail, not a 500: the same
 * {@code @ControllerAdvice} as for Spring MVC, bound here to WebFlux's controller infrastructure (no server).
 */
@Tag("unit")
class LocksmithWebFluxTest {

  private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, LocksmithAutoConfiguration.class,
          LocksmithWebAutoConfiguration.class))
      .withPropertyValues("locksmith.backend=in-jvm")
      .withBean(Orders.class, Orders::new);

  /** Locked endpoints, synchronous and reactive. */
  @RestController
  public static class Orders {
    @GetMapping("/orders/{id}")
    @DistributedLock(name = "order:#{#p0}", waitTime = "0")
    public String order(@PathVariable("id") String id) {
      return "ok " + id;
    }

    @GetMapping("/reactive/{id}")
    @DistributedLock(name = "order:#{#p0}", waitTime = "0")
    public Mono<String> reactive(@PathVariable("id") String id) {
      return Mono.just("ok " + id);
    }
  }

  private static WebTestClient client(org.springframework.context.ApplicationContext ctx) {
    return WebTestClient.bindToController(ctx.getBean(Orders.class))
        .controllerAdvice(ctx.getBean(LockNotAcquiredProblemHandler.class)).build();
  }

  @Test
  void aBusyLockIsA409ProblemDetailForSynchronousAndReactiveHandlers() {
    runner.run(ctx -> {
      WebTestClient web = client(ctx);
      web.get().uri("/orders/7").exchange().expectStatus().isOk();
      web.get().uri("/reactive/7").exchange().expectStatus().isOk();
      try (Lease held = ctx.getBean(LockClient.class).lock("order:7").acquire(Duration.ZERO)) {
        for (String path : new String[] {"/orders/7", "/reactive/7"}) {
          web.get().uri(path).exchange()
              .expectStatus().isEqualTo(409)
              .expectHeader().doesNotExist("Retry-After")
              .expectHeader().contentType(MediaType.APPLICATION_PROBLEM_JSON)
              .expectBody()
              .jsonPath("$.status").isEqualTo(409)
              .jsonPath("$.title").isEqualTo("Lock not acquired")
              .consumeWith(r -> assertThat(new String(r.getResponseBodyContent()))
                  .as("lock names are often business ids: not in the response").doesNotContain("order:7"));
        }
      }
    });
  }

  @Test
  void statusAndRetryAfterAreConfigurable() {
    runner.withPropertyValues("locksmith.web.status=423", "locksmith.web.retry-after=2500ms").run(ctx -> {
      try (Lease held = ctx.getBean(LockClient.class).lock("order:8").acquire(Duration.ZERO)) {
        client(ctx).get().uri("/reactive/8").exchange()
            .expectStatus().isEqualTo(423).expectHeader().valueEquals("Retry-After", "3");
      }
    });
  }
}
