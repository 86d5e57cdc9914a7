package io.locksmith.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.testkit.RedisServerExtension;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A real client build on a Lettuce older than the floor: a child JVM whose class path is this one's with
 * the Lettuce jar swapped for {@code locksmith.unsupported.lettuce.jar} (copied by the POM), against a real
 * Redis, so that without the check the build would connect and go on.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class UnsupportedLettuceTest {
  @RegisterExtension
  static final RedisServerExtension REDIS = new RedisServerExtension();

  @Test
  void anUnsupportedLettuceIsRefusedAtBuildWithTheVersionTheRangeAndTheFix() throws Exception {
    Path old = Path.of(System.getProperty("locksmith.unsupported.lettuce.jar", "not set by the POM"));
    assertThat(old).as("the unsupported Lettuce, copied by maven-dependency-plugin").isRegularFile();
    List<String> classPath = new ArrayList<>();
    int swapped = 0;
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      if (Path.of(entry).getFileName().toString().startsWith("lettuce-core-")) {
        classPath.add(old.toString());
        swapped++;
      } else {
        classPath.add(entry);
      }
    }
    assertThat(swapped).as("Lettuce jars on this JVM's class path").isEqualTo(1);

    Process child = new ProcessBuilder(ProcessHandle.current().info().command().orElseThrow(),
        "-cp", String.join(File.pathSeparator, classPath), UnsupportedLettuceMain.class.getName(),
        REDIS.server().uri())
        .redirectErrorStream(true).start();
    String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(child.waitFor(60, TimeUnit.SECONDS)).isTrue();

    String version = old.getFileName().toString().replace("lettuce-core-", "").replace(".jar", "");
    assertThat(output).as("the child's output").contains("OUTCOME java.lang.IllegalStateException: Lettuce "
            + version + " is on the class path")
        .contains("is on the class path, but locksmith-redis needs Lettuce " + LettuceVersion.FLOOR + " or newer")
        .contains("set the property lettuce.version to " + LettuceVersion.FLOOR)
        .doesNotContain("NoSuchMethodError").doesNotContain("built, locked and released");
  }
}
