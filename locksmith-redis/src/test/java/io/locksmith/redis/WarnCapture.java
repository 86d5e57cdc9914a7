package io.locksmith.redis;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * The log lines written while open, from every thread: slf4j-simple (the test binding) looks up {@code
 * System.err} at every call, so replacing it sees them all; they still reach the real stream. Not for
 * tests that run in parallel.
 */
final class WarnCapture implements AutoCloseable {
  private final PrintStream original = System.err;
  private final ByteArrayOutputStream captured = new ByteArrayOutputStream();

  WarnCapture() {
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
}
