package io.locksmith.internal;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * The log lines written while open, from every thread. slf4j-simple (the test binding) looks up {@code
 * System.err} at each log call, so replacing it sees everything; what is captured still reaches the real
 * stream. Not for tests that run in parallel.
 */
final class LogCapture implements AutoCloseable {
  private final PrintStream original = System.err;
  private final ByteArrayOutputStream captured = new ByteArrayOutputStream();

  LogCapture() {
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
    };
    System.setErr(new PrintStream(tee, true, StandardCharsets.UTF_8));
  }

  /** @return everything captured so far */
  String text() {
    synchronized (captured) {
      return captured.toString(StandardCharsets.UTF_8);
    }
  }

  /** @return how many captured lines contain {@code fragment} */
  long lines(String fragment) {
    return text().lines().filter(l -> l.contains(fragment)).count();
  }

  @Override
  public void close() {
    System.err.flush();
    System.setErr(original);
  }

  /**
   * Polls {@code condition} until it holds or {@code within} passes; the interval is that of an
   * assertion, the condition is what is awaited.
   *
   * @return whether it held in time
   */
  static boolean eventually(Duration within, BooleanSupplier condition) throws InterruptedException {
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
