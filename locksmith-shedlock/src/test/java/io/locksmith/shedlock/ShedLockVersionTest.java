package io.locksmith.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import net.javacrumbs.shedlock.core.LockConfiguration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The module's tests run twice, on ShedLock 6.x's core and on 7.x's (see the pom): this checks that each run
 * really has the core it claims on its class path, so a green 7.x run means the adapter works on 7.x.
 */
@Tag("unit")
class ShedLockVersionTest {
  @Test
  void theShedLockCoreOnTheClassPathIsTheOneThisRunIsFor() {
    String expected = System.getProperty("locksmith.expected.shedlock.version");
    assertThat(expected).as("set by the pom for each test run").isNotBlank();
    String jar = LockConfiguration.class.getProtectionDomain().getCodeSource().getLocation().getPath();
    assertThat(jar).as("shedlock-core jar").endsWith("/shedlock-core-" + expected + ".jar");
  }

  @Test
  void theSpringFrameworkOfTheSpring7RunIsSpring7() {
    // set only by the run that puts shedlock-spring 7.x on Spring Framework 7 (the Boot 4 line)
    String expected = System.getProperty("locksmith.expected.spring.version");
    if (expected == null || expected.isBlank()) {
      return;
    }
    assertThat(org.springframework.core.SpringVersion.getVersion()).isEqualTo(expected);
    String jar = net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock.class.getProtectionDomain().getCodeSource()
        .getLocation().getPath();
    assertThat(jar).as("shedlock-spring jar").endsWith("/shedlock-spring-" + System.getProperty("locksmith.expected.shedlock.version") + ".jar");
  }
}
