package io.locksmith.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.LockClient;
import io.locksmith.micrometer.LocksmithMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.core.annotation.MergedAnnotations;

/**
 * Issue 26, acceptance 2, on the Boot line this module builds with ({@link BootLine#NAME}): an application
 * with the starter, Actuator and Micrometer starts with no Locksmith warning, has the {@code locksmith}
 * health contributor and endpoint, its meters, and its {@code @DistributedLock} method runs locked. Boot 4
 * once started with "Failed to introspect meta-annotation @AutoConfiguration on class
 * io.locksmith.spring.LocksmithAutoConfiguration" and no health contributor: this test catches both.
 */
@Tag("unit")
class BootApplicationTest {

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class App {
    @Bean
    Stock stock(LockClient client) {
      return new Stock(client);
    }
  }

  /** A locked method that reports whether its lock is held while it runs. */
  public static class Stock {
    private final LockClient client;

    Stock(LockClient client) {
      this.client = client;
    }

    @DistributedLock(name = "stock:#{#p0}")
    public boolean sellReportingWhetherLocked(String sku) {
      return client.inspect("stock:" + sku).isPresent() && LockedCall.fencingToken() > 0;
    }
  }

  @Test
  void everyLocksmithAutoConfigurationIsReadableOnThisLine() throws Exception {
    List<String> ours = ImportCandidates.load(AutoConfiguration.class, getClass().getClassLoader()).getCandidates()
        .stream().filter(n -> n.startsWith("io.locksmith.")).collect(Collectors.toList());
    assertThat(ours).contains(LocksmithAutoConfiguration.class.getName(), LocksmithEndpointAutoConfiguration.class.getName());
    for (String name : ours) {
      // an @AutoConfiguration naming a class this line does not have is dropped by Spring with only a warning
      assertThat(MergedAnnotations.from(Class.forName(name)).isPresent(AutoConfiguration.class))
          .as("@AutoConfiguration of %s readable on %s", name, BootLine.NAME).isTrue();
    }
  }

  @Test
  void anApplicationStartsWithoutLocksmithWarningsWithHealthEndpointMetersAndLockedMethods() {
    PrintStream original = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    // slf4j-simple (the test logger) writes to whatever System.err is at the time of the call
    System.setErr(new PrintStream(new OutputStream() {
      @Override
      public void write(int b) {
        captured.write(b);
        original.write(b);
      }
    }, true, StandardCharsets.UTF_8));
    ConfigurableApplicationContext ctx;
    try {
      ctx = new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE)
          .properties("locksmith.backend=in-jvm", "spring.main.banner-mode=off", "spring.datasource.generate-unique-name=true",
              "management.endpoints.web.exposure.include=health,locksmith")
          .run();
    } finally {
      System.setErr(original);
    }
    try (ctx) {
      List<String> warnings = Arrays.stream(captured.toString(StandardCharsets.UTF_8).split("\\R"))
          .filter(l -> l.contains("WARN") || l.contains("ERROR"))
          .filter(l -> l.toLowerCase().contains("locksmith") || l.contains("Failed to introspect"))
          .collect(Collectors.toList());
      assertThat(warnings).as("Locksmith warnings at start-up on %s", BootLine.NAME).isEmpty();
      assertThat(BootLine.healthRegistryHas(ctx, "locksmith")).as("locksmith health contributor on %s", BootLine.NAME).isTrue();
      assertThat(ctx.getBeansOfType(LocksmithEndpoint.class)).as("locksmith endpoint on %s", BootLine.NAME).hasSize(1);
      assertThat(ctx.getBean(Stock.class).sellReportingWhetherLocked("A")).as("@DistributedLock method locked").isTrue();
      assertThat(ctx.getBean(MeterRegistry.class).find(LocksmithMetrics.ACQUIRE).tags("client", "default").timer())
          .as("Locksmith meters in the application's registry").isNotNull();
    }
  }
}
