package io.locksmith.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Counts what a Redis server executes, through {@code MONITOR}: commands sent by clients (each one a
 * round trip's worth of server work) apart from commands run inside scripts, and {@code PUBLISH}es
 * wherever they come from (wake-ups), and by name the commands run inside scripts. MONITOR slows the server down, so it is attached only for a
 * separate sampling window, never while throughput is measured.
 */
final class Monitor implements AutoCloseable {
  private final Socket socket;
  private final Thread reader;
  private final AtomicLong clientCommands = new AtomicLong();
  private final AtomicLong publishes = new AtomicLong();
  /** Commands run inside scripts, by lower-case name: what {@link CommandStats} takes out of the sum. */
  private final java.util.concurrent.ConcurrentHashMap<String, AtomicLong> scriptCalls =
      new java.util.concurrent.ConcurrentHashMap<>();
  private final String host;
  private final int port;
  private volatile boolean counting;
  private volatile String marker;
  private volatile java.util.concurrent.CountDownLatch markerSeen = new java.util.concurrent.CountDownLatch(0);

  Monitor(String host, int port) throws IOException {
    this.host = host;
    this.port = port;
    socket = new Socket();
    socket.connect(new InetSocketAddress(host, port), 2000);
    OutputStream out = socket.getOutputStream();
    out.write("MONITOR\r\n".getBytes(StandardCharsets.US_ASCII));
    out.flush();
    BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
    String ok = in.readLine();
    if (!"+OK".equals(ok)) {
      socket.close();
      throw new IOException("MONITOR refused: " + ok);
    }
    reader = new Thread(() -> read(in), "bench-monitor-" + port);
    reader.setDaemon(true);
    reader.start();
  }

  private void read(BufferedReader in) {
    try {
      String line;
      while ((line = in.readLine()) != null) {
        String m = marker;
        if (m != null && line.contains(m)) {
          counting = false;
          marker = null;
          markerSeen.countDown();
          continue;
        }
        if (!counting) {
          continue;
        }
        int close = line.indexOf(']');
        if (close < 0) {
          continue;
        }
        boolean fromScript = line.substring(0, close).contains(" lua");
        String rest = line.substring(close + 1).trim().toLowerCase(java.util.Locale.ROOT);
        if (!fromScript) {
          clientCommands.incrementAndGet();
        } else {
          scriptCalls.computeIfAbsent(commandName(rest), k -> new AtomicLong()).incrementAndGet();
        }
        if (rest.startsWith("\"publish\"") || rest.startsWith("\"spublish\"")) {
          publishes.incrementAndGet();
        }
      }
    } catch (IOException closed) {
      // the socket was closed: done
    }
  }

  /** @return the command of a MONITOR line's {@code "name" "arg" …} part, e.g. {@code set} */
  static String commandName(String quoted) {
    int end = quoted.indexOf('"', 1);
    return quoted.startsWith("\"") && end > 0 ? quoted.substring(1, end) : quoted;
  }

  void start() {
    counting = true;
  }

  /**
   * Stops counting once every command sent before this call has been seen: an {@code ECHO} of a unique
   * marker goes through the server after them, and counting ends at it.
   */
  void stop() throws IOException, InterruptedException {
    String m = "bench-marker-" + System.nanoTime();
    markerSeen = new java.util.concurrent.CountDownLatch(1);
    marker = m;
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(host, port), 2000);
      s.setSoTimeout(2000);
      s.getOutputStream().write(("ECHO " + m + "\r\n").getBytes(StandardCharsets.US_ASCII));
      s.getOutputStream().flush();
      new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII)).readLine();
    }
    if (!markerSeen.await(5, java.util.concurrent.TimeUnit.SECONDS)) {
      counting = false;
      throw new IOException("MONITOR on port " + port + " did not show the end marker within 5 s");
    }
  }

  long clientCommands() {
    return clientCommands.get();
  }

  long publishes() {
    return publishes.get();
  }

  /** @return commands run inside scripts while counting, by lower-case name */
  java.util.Map<String, Long> scriptCalls() {
    java.util.Map<String, Long> calls = new java.util.TreeMap<>();
    scriptCalls.forEach((name, n) -> calls.put(name, n.get()));
    return calls;
  }

  @Override
  public void close() {
    try {
      socket.close();
    } catch (IOException e) {
      // nothing to do
    }
  }
}
