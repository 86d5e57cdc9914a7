package io.locksmith.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code locksmith bench} options whose output the other tests do not read. */
class BenchCommandTest {
  private final ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
  private final PrintStream out = new PrintStream(outBytes, true, StandardCharsets.UTF_8);
  private final PrintStream err = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);

  /**
   * Issue 25 item 8: {@code --json} of the hand-off scenario wrote the text table into the file; it writes the
   * JSON document, as every other scenario does.
   */
  @Test
  @Timeout(180)
  void theHandOffScenarioWritesJsonToItsJsonFile(@TempDir Path dir) throws Exception {
    Path json = dir.resolve("hand-off.json");
    int code = Main.run(new String[] {"bench", "--backend", "postgres", "--scenario", "hand-off", "--threads", "3",
        "--json", json.toString()}, out, err);
    assertThat(code).as(outBytes.toString(StandardCharsets.UTF_8)).isZero();
    String written = Files.readString(json).strip();
    assertThat(written).startsWith("{").endsWith("}")
        .contains("\"scenario\": \"hand-off\"", "\"rounds\": 3", "\"database\": \"PostgreSQL")
        .containsPattern("\\{\"impl\": \"locksmith-jdbc\", \"p50Micros\": \\d+, \"p90Micros\": \\d+, \"maxMicros\": \\d+}")
        .containsPattern("\\{\"impl\": \"spring-jdbc\", \"p50Micros\": \\d+");
    assertThat(outBytes.toString(StandardCharsets.UTF_8)).as("the table still goes to the terminal")
        .contains("p50 µs");
  }
}
