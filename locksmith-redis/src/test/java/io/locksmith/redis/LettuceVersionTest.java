package io.locksmith.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisClient;
import io.netty.util.Version;
import java.io.IOException;
import java.net.URL;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The Lettuce version check, and which Lettuce (and Netty) this test run has: the module's tests run once
 * per Lettuce line (the surefire executions {@code lettuce-*} in its POM), and each run names what it
 * expects in {@code locksmith.expected.lettuce.version} / {@code locksmith.expected.netty.version}.
 */
@Tag("unit")
class LettuceVersionTest {

  @Test
  void readsTheFormsLettuceVersionsComeIn() {
    assertThat(LettuceVersion.parse("6.6.0.RELEASE")).contains(new LettuceVersion(6, 6, 0, "RELEASE"));
    assertThat(LettuceVersion.parse("7.7.0.RELEASE")).contains(new LettuceVersion(7, 7, 0, "RELEASE"));
    // the manifest's Implementation-Version carries the commit
    assertThat(LettuceVersion.parse("6.6.0.RELEASE/643bd47")).contains(new LettuceVersion(6, 6, 0, "RELEASE"));
    assertThat(LettuceVersion.parse("7.8.0.BUILD-SNAPSHOT")).contains(new LettuceVersion(7, 8, 0, "BUILD-SNAPSHOT"));
    assertThat(LettuceVersion.parse("7.0.0-SNAPSHOT")).contains(new LettuceVersion(7, 0, 0, "SNAPSHOT"));
    assertThat(LettuceVersion.parse("7.0.0.M1")).contains(new LettuceVersion(7, 0, 0, "M1"));
    assertThat(LettuceVersion.parse(" 6.8 ")).contains(new LettuceVersion(6, 8, 0, ""));
    assertThat(LettuceVersion.parse("6.10.1.RELEASE").orElseThrow())
        .as("numbers compare as numbers, not text").isGreaterThan(LettuceVersion.parse("6.9.5.RELEASE").orElseThrow());
    assertThat(LettuceVersion.parse("6.3.2-SNAPSHOT").orElseThrow())
        .as("a snapshot of the floor is the floor's API").isEqualByComparingTo(LettuceVersion.FLOOR);
    for (String bad : new String[] {null, "", "6", "six.six", "6.x.0", "v6.6.0", "99999999999.0.0"}) {
      assertThat(LettuceVersion.parse(bad)).as(String.valueOf(bad)).isEmpty();
    }
  }

  @Test
  void anOlderLettuceIsRefusedNamingTheVersionTheRangeAndTheFix() {
    assertThatThrownBy(() -> LettuceVersion.check("6.2.7.RELEASE/a1b2c3d"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("Lettuce 6.2.7.RELEASE/a1b2c3d is on the class path, but locksmith-redis needs Lettuce"
            + " 6.3.2.RELEASE or newer (tested up to 7.7.0.RELEASE); Spring Boot 3.3 and older manage Lettuce 6.3"
            + " or older. Select a newer Lettuce: with Spring Boot's dependency management set the property"
            + " lettuce.version to 6.3.2.RELEASE or newer (Maven <properties>, Gradle ext['lettuce.version']), or"
            + " move to Spring Boot 3.5 or 4; otherwise declare io.lettuce:lettuce-core 6.3.2.RELEASE or newer as a"
            + " dependency of your own.");
    assertThatThrownBy(() -> LettuceVersion.check("6.3.1.RELEASE")).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> LettuceVersion.check("5.3.7.RELEASE"))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("Lettuce 5.3.7.RELEASE is on the class path")
        .hasMessageNotContaining("Spring Boot 3.3");
  }

  @Test
  void theTestedRangePassesAndTheUnknownIsLetThroughWithAWarning() {
    assertThat(LettuceVersion.check(LettuceVersion.FLOOR.toString())).isNull();
    assertThat(LettuceVersion.check("6.4.2.RELEASE/f4dfb40")).as("Spring Boot 3.4's line").isNull();
    assertThat(LettuceVersion.check("6.8.2.RELEASE/34f8700")).isNull();
    assertThat(LettuceVersion.check("7.7.0.RELEASE/1960d49")).isNull();
    assertThat(LettuceVersion.check("7.99.0.BUILD-SNAPSHOT")).isNull();
    assertThat(LettuceVersion.check("8.0.0.RELEASE")).contains("Lettuce 8.0.0.RELEASE is on the class path")
        .contains("tested on Lettuce 6.3.2.RELEASE to 7.7.0.RELEASE");
    assertThat(LettuceVersion.check(null)).contains("Cannot tell which Lettuce is on the class path");
    assertThat(LettuceVersion.check("custom-build")).contains("(version 'custom-build')");
  }

  @Test
  void thisRunHasTheLettuceAndNettyItNamesOnceOnTheClassPath() throws IOException {
    String expected = System.getProperty("locksmith.expected.lettuce.version");
    String found = LettuceVersion.onClassPath();
    assertThat(found).as("Lettuce's version, read as the client build reads it").isNotNull();
    if (expected != null) {
      assertThat(LettuceVersion.parse(found)).isEqualTo(LettuceVersion.parse(expected));
    }
    LettuceVersion.requireSupported(); // the Lettuce this run tests on is one the module accepts
    assertThat(copies(RedisClient.class)).as("copies of Lettuce on the class path").hasSize(1);
    assertThat(copies(Version.class)).as("copies of netty-common on the class path").hasSize(1);
    assertThat(copies(reactor.core.publisher.Mono.class)).as("copies of reactor-core on the class path").hasSize(1);
    String expectedNetty = System.getProperty("locksmith.expected.netty.version");
    if (expectedNetty != null) {
      for (Version v : Version.identify().values()) {
        assertThat(v.artifactVersion()).as(v.artifactId()).isEqualTo(expectedNetty);
      }
    }
  }

  private static List<URL> copies(Class<?> type) throws IOException {
    return new ArrayList<>(Collections.list(
        type.getClassLoader().getResources(type.getName().replace('.', '/') + ".class")));
  }
}
