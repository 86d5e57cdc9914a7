package io.locksmith.testkit;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * What is written to {@code System.err} while open, from every thread, still passed on to the real
 * stream. Tests log through slf4j-simple, which looks up {@code System.err} at every log call (its
 * default, uncached output), so this sees every log line, and a test can assert that a WARN was given.
 *
 * <p>Not thread-safe across tests: it swaps {@code System.err} for the whole JVM, so it is for tests that
 * do not run in parallel. {@link #close()} puts the original stream back.
 */
public final class LogCapture implements AutoCloseable {
  private final PrintStream original = System.err;
  private final ByteArrayOutputStream captured = new ByteArrayOutputStream();

  /** Starts capturing. */
  public LogCapture() {
    OutputStream tee = new OutputStream() {
      @Override
      public void write(int b) {
        synchronized (captured) {
          captured.write(b);
        }
        original.write(b);
      }

      @Override
      public void write(byte[] b, int off, int len) {
        synchronized (captured) {
          captured.write(b, off, len);
        }
        original.write(b, off, len);
      }

      @Override
      public void flush() {
        original.flush();
      }
    };
    System.setErr(new PrintStream(tee, true, StandardCharsets.UTF_8));
  }

  /** @return everything captured so far */
  public String text() {
    synchronized (captured) {
      return captured.toString(StandardCharsets.UTF_8);
    }
  }

  /**
   * @param fragment text to look for
   * @return how many captured lines contain {@code fragment}
   */
  public long lines(String fragment) {
    return text().lines().filter(l -> l.contains(fragment)).count();
  }

  /** Stops capturing and restores the original {@code System.err}. */
  @Override
  public void close() {
    System.err.flush();
    System.setErr(original);
  }

  /**
   * Polls {@code condition} every 10 ms until it holds or {@code within} passes: for log lines written by
   * another thread, where there is nothing else to wait on.
   *
   * @param within how long to wait
   * @param condition what is awaited
   * @return whether it held in time
   * @throws InterruptedException if interrupted while waiting
   */
  public static boolean eventually(Duration within, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    while (System.nanoTime() < deadline) {
      if (condition.getAsBoolean()) {
        return true;
      }
      Thread.sleep(10);
    }
    return condition.getAsBoolean();
  }
}
