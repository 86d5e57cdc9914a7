package io.locksmith.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * Where the database servers of the testkit keep their files, and small helpers they share. Public for
 * the testkit's database packages only; stateless and thread-safe.
 *
 * <p>The root is the system property {@code locksmith.testkit.dir} (a module's surefire configuration
 * points it under {@code target/}, so parallel builds of different modules never share a directory), or
 * {@code <java.io.tmpdir>/locksmith-testkit}.
 */
public final class DatabaseDirs {
  private DatabaseDirs() {}

  /**
   * @param prefix the directory name's prefix, e.g. {@code "pg-"}
   * @return a new, empty directory under the root
   * @throws UncheckedIOException if it cannot be created
   */
  public static Path newDirectory(String prefix) {
    try {
      Path root = root();
      Files.createDirectories(root);
      return Files.createTempDirectory(root, prefix);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create a directory for a test database", e);
    }
  }

  /** @return the root directory (not necessarily created yet) */
  public static Path root() {
    String configured = System.getProperty("locksmith.testkit.dir");
    return configured != null && !configured.isBlank() ? Paths.get(configured)
        : Paths.get(System.getProperty("java.io.tmpdir"), "locksmith-testkit");
  }

  /**
   * Deletes a directory tree, best effort (cleanup must not hide the failure that led to it).
   *
   * @param dir the directory; nothing happens if it does not exist
   */
  public static void deleteQuietly(Path dir) {
    if (dir == null || !Files.exists(dir)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(dir)) {
      walk.sorted(Comparator.reverseOrder()).forEach(p -> {
        try {
          Files.deleteIfExists(p);
        } catch (IOException ignored) {
          // best effort
        }
      });
    } catch (IOException | UncheckedIOException ignored) {
      // best effort
    }
  }

  /**
   * @return a TCP port on 127.0.0.1 that was free a moment ago
   * @throws UncheckedIOException if none can be found
   */
  public static int freePort() {
    try (ServerSocket socket = new ServerSocket(0)) {
      socket.setReuseAddress(true);
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("no free port", e);
    }
  }

  /**
   * Signals a process and all of its descendants (a database server's worker processes), parents first
   * for {@code SIGSTOP} so that none forks a new worker meanwhile.
   *
   * @param pid the root process
   * @param signal one of {@code "pause"}, {@code "resume"}, {@code "kill9"}
   * @throws IllegalStateException if the process does not exist or the signal fails
   */
  public static void signalTree(long pid, String signal) {
    ProcessHandle root = ProcessHandle.of(pid)
        .orElseThrow(() -> new IllegalStateException("no process " + pid));
    java.util.List<Long> pids = new java.util.ArrayList<>();
    pids.add(pid);
    root.descendants().forEach(p -> pids.add(p.pid()));
    if (signal.equals("resume")) {
      java.util.Collections.reverse(pids);
    }
    for (long p : pids) {
      switch (signal) {
        case "pause" -> ProcessSignals.pause(p);
        case "resume" -> ProcessSignals.resume(p);
        case "kill9" -> {
          try {
            ProcessSignals.kill9(p);
          } catch (IllegalStateException goneMeanwhile) {
            // a worker that exited with its parent
          }
        }
        default -> throw new IllegalArgumentException(signal);
      }
    }
  }
}
