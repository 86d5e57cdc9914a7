package io.locksmith.spring;

import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

import io.locksmith.Lease;
import io.locksmith.LockClient;
import java.time.Duration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/** In a Spring MVC application, a lock not obtained is a 409 ProblemDetail, not a 500. */
@Tag("unit")
class LocksmithWebTest {

  private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(BootLine.webMvc()))
      .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, LocksmithAutoConfiguration.class,
          LocksmithWebAutoConfiguration.class))
      .withPropertyValues("locksmith.backend=in-jvm")
      .withBean(Orders.class, Orders::new);

  /** A locked endpoint. */
  @RestController
  public static class Orders {
    @GetMapping("/orders/{id}")
    @DistributedLock(name = "order:#{#p0}", waitTime = "0")
    public String order(@PathVariable("id") String id) {
      return "ok " + id;
    }
  }

  @Test
  void aBusyLockIsA409ProblemDetail() {
    runner.run(ctx -> {
      MockMvc mvc = MockMvcBuilders.webAppContextSetup(ctx).build();
      mvc.perform(get("/orders/7")).andExpect(status().isOk());
      try (Lease held = ctx.getBean(LockClient.class).lock("order:7").acquire(Duration.ZERO)) {
        mvc.perform(get("/orders/7"))
            .andExpect(status().isConflict())
            .andExpect(header().doesNotExist("Retry-After"))
            .andExpect(jsonPath("$.status").value(409))
            .andExpect(jsonPath("$.title").value("Lock not acquired"))
            .andExpect(result -> org.assertj.core.api.Assertions.assertThat(result.getResponse().getContentType())
                .isEqualTo(MediaType.APPLICATION_PROBLEM_JSON_VALUE))
            .andExpect(result -> org.assertj.core.api.Assertions.assertThat(result.getResponse().getContentAsString())
                .as("lock names are often business ids: not in the response").doesNotContain("order:7"));
      }
    });
  }

  @Test
  void statusAndRetryAfterAreConfigurable() {
    runner.withPropertyValues("locksmith.web.status=423", "locksmith.web.retry-after=2500ms").run(ctx -> {
      MockMvc mvc = MockMvcBuilders.webAppContextSetup(ctx).build();
      try (Lease held = ctx.getBean(LockClient.class).lock("order:8").acquire(Duration.ZERO)) {
        mvc.perform(get("/orders/8")).andExpect(status().isLocked()).andExpect(header().string("Retry-After", "3"));
      }
    });
  }
}
