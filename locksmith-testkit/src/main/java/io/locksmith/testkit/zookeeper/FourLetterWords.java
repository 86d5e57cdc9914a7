package io.locksmith.testkit.zookeeper;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * ZooKeeper's four-letter-word commands ({@code srvr}, {@code mntr}, {@code wchs}, ...) over a plain
 * socket. The servers of this package allow every command. Stateless and thread-safe.
 */
public final class FourLetterWords {
  private FourLetterWords() {}

  /**
   * Sends one command and reads the reply until the server closes the connection.
   *
   * @param host the server's host
   * @param port the server's client port
   * @param command a four-letter word, e.g. {@code "srvr"}
   * @param timeout bound on connecting and on each read
   * @return the reply text
   * @throws UncheckedIOException if the server cannot be reached or does not answer in time
   */
  public static String send(String host, int port, String command, Duration timeout) {
    int millis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress(host, port), millis);
      socket.setSoTimeout(millis);
      OutputStream out = socket.getOutputStream();
      out.write(command.getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = socket.getInputStream();
      ByteArrayOutputStream reply = new ByteArrayOutputStream();
      byte[] buffer = new byte[8192];
      int n;
      while ((n = in.read(buffer)) >= 0) {
        reply.write(buffer, 0, n);
      }
      return reply.toString(StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("four-letter word '" + command + "' to " + host + ":" + port + " failed: " + e, e);
    }
  }

  /**
   * {@code mntr} parsed into key/value pairs (tab-separated lines).
   *
   * @param host the server's host
   * @param port the server's client port
   * @param timeout bound on the exchange
   * @return the metrics, in the server's order
   * @throws UncheckedIOException if the server cannot be reached or does not answer in time
   */
  public static Map<String, String> monitor(String host, int port, Duration timeout) {
    Map<String, String> metrics = new LinkedHashMap<>();
    for (String line : send(host, port, "mntr", timeout).split("\\R")) {
      int tab = line.indexOf('\t');
      if (tab > 0) {
        metrics.put(line.substring(0, tab), line.substring(tab + 1).trim());
      }
    }
    return metrics;
  }

  /**
   * The server's role from {@code srvr}: {@code leader}, {@code follower}, {@code standalone}, or an
   * empty string if the server is not serving (no quorum: it answers that it is not running).
   *
   * @param host the server's host
   * @param port the server's client port
   * @param timeout bound on the exchange
   * @return the role
   * @throws UncheckedIOException if the server cannot be reached or does not answer in time
   */
  public static String mode(String host, int port, Duration timeout) {
    for (String line : send(host, port, "srvr", timeout).split("\\R")) {
      if (line.startsWith("Mode:")) {
        return line.substring("Mode:".length()).trim();
      }
    }
    return "";
  }
}
