package io.locksmith.cli;

import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs the {@code locksmith} command in a child JVM, as an operator does. The only way to see what it
 * logs: slf4j-simple reads its settings once per JVM, at the first logger, so a command run inside the
 * test JVM shows neither the settings {@link Main#main} makes nor the lines they let through.
 */
final class CliProcess {
  /** A failure deadline for a hung child, never a speed bound: a command finishes in seconds. */
  private static final long DEADLINE_SECONDS = 120;

  /** What a command did: its exit code, standard output and standard error. */
  record Result(int code, String out, String err) {
    @Override
    public String toString() {
      return "exit " + code + "\n--- stdout\n" + out + "--- stderr\n" + err;
    }
  }

  private CliProcess() {}

  static Result run(String... argv) throws IOException, InterruptedException {
    Path dir = Files.createDirectories(Path.of("target", "cli-runs"));
    Path out = Files.createTempFile(dir, "out", ".txt");
    Path err = Files.createTempFile(dir, "err", ".txt");
    List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"), Main.class.getName()));
    cmd.addAll(List.of(argv));
    Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    if (!p.waitFor(DEADLINE_SECONDS, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      fail("locksmith %s did not finish within %d s; stdout:%n%s%nstderr:%n%s", String.join(" ", argv),
          DEADLINE_SECONDS, Files.readString(out), Files.readString(err));
    }
    return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
        Files.readString(err, StandardCharsets.UTF_8));
  }
}
