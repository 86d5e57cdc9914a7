package io.locksmith.check;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Entry point of the JVM that loads the host during a check run ({@code --load N}): N threads spin on the
 * CPU until the harness ends it. Internal, not for direct use. Like a client JVM it exits at once when its
 * stdin closes, so it never outlives its harness.
 *
 * <p>Why a JVM of its own: spinning threads in the harness would slow the TCP proxies that inject the link
 * faults, and so disturb what is measured; beside the client JVMs they compete for the CPU with the
 * clients' timer and listener threads, which is the point (docs/safety.md, "Telling the holder first").
 */
public final class LoadMain {
  /** Written by the spinning threads so that the JIT cannot drop their loops. */
  static volatile long sink;

  private LoadMain() {}

  /** @param args {@code threads} */
  public static void main(String[] args) throws IOException {
    int threads = Integer.parseInt(args[0]);
    for (int i = 0; i < threads; i++) {
      Thread t = new Thread(LoadMain::spin, "check-load-" + i);
      t.setDaemon(true);
      t.start();
    }
    InputStream in = System.in;
    while (in.read() >= 0) {
      // nothing is sent; end of input means the harness is gone
    }
    Runtime.getRuntime().halt(0);
  }

  private static void spin() {
    long x = 1;
    while (true) {
      for (int i = 0; i < 1_000_000; i++) {
        x = x * 6364136223846793005L + 1442695040888963407L;
      }
      sink = x;
    }
  }

  /**
   * Starts the load JVM.
   *
   * @param threads busy-loop threads
   * @param workDir where its log goes
   * @return the process
   * @throws IOException if it cannot be started
   */
  static Process start(int threads, Path workDir) throws IOException {
    String java = ProcessHandle.current().info().command().orElse(Path.of(System.getProperty("java.home"), "bin",
        "java").toString());
    List<String> cmd = List.of(java, "-Xmx32m", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
        LoadMain.class.getName(), Integer.toString(threads));
    return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(workDir.resolve("load.log").toFile())
        .start();
  }

  /** Ends the load JVM, if any; never throws. */
  static void stop(Process load) {
    if (load == null) {
      return;
    }
    load.destroyForcibly();
    try {
      load.waitFor(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
