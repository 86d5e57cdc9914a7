package io.locksmith.redis;

import java.io.BufferedReader;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads Redis {@code MONITOR}: every command the server executes, in order, as the server saw it.
 * Commands run inside scripts are marked {@code [0 lua]}; commands sent by clients carry the client's
 * address. Test-only evidence of what reached the server.
 */
final class RedisMonitor implements Closeable {
  private final Socket socket;
  private final BufferedReader in;
  private final OutputStream out;

  RedisMonitor(String host, int port) throws IOException {
    socket = new Socket(host, port);
    socket.setSoTimeout(5_000);
    in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
    out = socket.getOutputStream();
    out.write("*1\r\n$7\r\nMONITOR\r\n".getBytes(StandardCharsets.US_ASCII));
    out.flush();
    String ok = in.readLine();
    if (!"+OK".equals(ok)) {
      throw new IOException("MONITOR refused: " + ok);
    }
  }

  /** @return the next monitored line, or null if none arrives within {@code millis} */
  String next(int millis) throws IOException {
    socket.setSoTimeout(millis);
    try {
      return in.readLine();
    } catch (SocketTimeoutException e) {
      return null;
    }
  }

  /** Reads until a line contains {@code marker}; @return the lines before it. */
  List<String> until(String marker) throws IOException {
    List<String> lines = new ArrayList<>();
    while (true) {
      String line = next(5_000);
      if (line == null) {
        throw new IOException("marker " + marker + " not seen; got " + lines);
      }
      if (line.contains(marker)) {
        return lines;
      }
      lines.add(line);
    }
  }

  static boolean fromScript(String line) {
    return line.contains(" lua]");
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
