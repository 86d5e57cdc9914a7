package io.locksmith.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@code bench --scenario rw-mix --read-ratio R}: bad values are usage errors, caught before anything runs. */
@Tag("unit")
class BenchReadRatioTest {
  private final ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
  private final ByteArrayOutputStream errBytes = new ByteArrayOutputStream();
  private final PrintStream out = new PrintStream(outBytes, true, StandardCharsets.UTF_8);
  private final PrintStream err = new PrintStream(errBytes, true, StandardCharsets.UTF_8);

  private int bench(String... args) {
    String[] argv = new String[args.length + 1];
    argv[0] = "bench";
    System.arraycopy(args, 0, argv, 1, args.length);
    return Main.run(argv, out, err);
  }

  @Test
  void badReadRatiosExitWithUsage() {
    assertThat(bench("--scenario", "rw-mix", "--read-ratio", "1")).isEqualTo(2);
    assertThat(bench("--scenario", "rw-mix", "--read-ratio", "most")).isEqualTo(2);
    assertThat(bench("--scenario", "hot-key", "--read-ratio", "0.5")).isEqualTo(2);
    assertThat(bench("--scenario", "rw-mix", "--threads", "1")).isEqualTo(2);
    assertThat(errBytes.toString(StandardCharsets.UTF_8))
        .contains("read ratio must be between 0 and 1 (exclusive), was 1.0")
        .contains("--read-ratio must be a number between 0 and 1, was 'most'")
        .contains("--read-ratio applies to --scenario rw-mix only")
        .contains("rw-mix needs at least 2 threads")
        .contains("rw-mix");
    assertThat(outBytes.toString(StandardCharsets.UTF_8)).as("nothing ran").doesNotContain("warming up");
  }
}
