package io.locksmith.bench;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The server's own account of a sample run, from {@code INFO commandstats}: {@code CONFIG RESETSTAT} on
 * every server before it, the {@code cmdstat_*} lines of every server after it.
 *
 * <p>What is summed. {@code calls}: every command executed, scripts and the commands they run alike (a
 * script's inner {@code redis.call} goes through the server's command dispatcher and is counted under its
 * own name). {@code usec}: the server measures a script's time around its whole execution, so its
 * {@code usec} already contains the time of the commands it ran (checked on Redis 6.2.6: 20 {@code EVAL}s
 * of 20,000 {@code INCR}s each reported 3.15 s for {@code eval} and 0.86 s, separately, for {@code incr}).
 * Summing every line would count inner commands twice, so their share is taken out: for each command name
 * the calls made inside scripts (per cycle, from the {@link Monitor} sample) times that name's mean
 * {@code usec} per call. {@code EXEC} also times the commands it queued; none of the implementations uses
 * {@code MULTI} per cycle, so that is not corrected. The sampling connection's own {@code CONFIG} and
 * {@code INFO} are left out. Not thread-safe; one sample at a time.
 */
final class CommandStats {
  /** Commands that run other commands inside their own measured time. */
  private static final Set<String> SCRIPTS = Set.of("eval", "evalsha", "eval_ro", "evalsha_ro", "fcall",
      "fcall_ro");
  private static final Duration TIMEOUT = Duration.ofSeconds(5);

  private CommandStats() {}

  /** One {@code cmdstat_} line: calls and microseconds. */
  record Stat(long calls, long usec) {}

  /**
   * Runs {@code sample} between a reset and a read of every server's command statistics.
   *
   * @param servers plain {@code redis://host:port} URIs (no authentication, as for MONITOR)
   * @param rtt an added round trip: waited out before reading, for commands still in a proxy
   * @param scriptCallsPerCycle commands run inside scripts per cycle, by lower-case name (MONITOR sample)
   * @param sample the run; returns the cycles it completed
   * @return server microseconds per cycle and calls per cycle, or null if the statistics cannot be read
   *     (e.g. {@code CONFIG} disabled on a managed server) or no cycle completed
   * @throws Exception whatever the sample throws
   */
  static double[] sample(List<String> servers, Duration rtt, Map<String, Double> scriptCallsPerCycle,
      Bench.SampleRun sample) throws Exception {
    try {
      for (String server : servers) {
        expect(call(server, "CONFIG", "RESETSTAT"), "+OK", server);
      }
    } catch (IOException e) {
      return null;
    }
    long cycles = sample.run();
    if (!rtt.isZero()) {
      TimeUnit.NANOSECONDS.sleep(rtt.toNanos()); // commands still in a proxy
    }
    Map<String, Stat> all = new LinkedHashMap<>();
    try {
      for (String server : servers) {
        parse(call(server, "INFO", "commandstats")).forEach((name, stat) ->
            all.merge(name, stat, (a, b) -> new Stat(a.calls() + b.calls(), a.usec() + b.usec())));
      }
    } catch (IOException e) {
      return null;
    }
    return cycles == 0 ? null : perCycle(all, scriptCallsPerCycle, cycles);
  }

  /**
   * @param stats command statistics summed over the servers, by lower-case name
   * @param scriptCallsPerCycle calls made inside scripts per cycle, by lower-case name
   * @param cycles cycles of the sample
   * @return microseconds (inner commands' share taken out) and calls per cycle
   */
  static double[] perCycle(Map<String, Stat> stats, Map<String, Double> scriptCallsPerCycle, long cycles) {
    double usec = 0;
    long calls = 0;
    for (Map.Entry<String, Stat> e : stats.entrySet()) {
      String base = e.getKey().split("\\|", 2)[0]; // Redis 7 names subcommands config|resetstat
      if (base.equals("config") || base.equals("info")) {
        continue; // the sampling connection's own
      }
      Stat s = e.getValue();
      calls += s.calls();
      usec += s.usec();
      double inner = Math.min(s.calls(), scriptCallsPerCycle.getOrDefault(base, 0.0) * cycles);
      if (inner > 0 && !SCRIPTS.contains(base)) {
        usec -= s.usec() * inner / s.calls(); // already inside the script's usec
      }
    }
    return new double[] {usec / cycles, (double) calls / cycles};
  }

  /** @return {@code cmdstat_<name>:calls=…,usec=…} lines by lower-case name */
  static Map<String, Stat> parse(String info) {
    Map<String, Stat> stats = new LinkedHashMap<>();
    for (String line : info.split("\r?\n")) {
      if (!line.startsWith("cmdstat_")) {
        continue;
      }
      int colon = line.indexOf(':');
      String name = line.substring("cmdstat_".length(), colon).toLowerCase(Locale.ROOT);
      long calls = 0;
      long usec = 0;
      for (String field : line.substring(colon + 1).split(",")) {
        String[] kv = field.split("=", 2);
        if (kv[0].equals("calls")) {
          calls = Long.parseLong(kv[1]);
        } else if (kv[0].equals("usec")) {
          usec = Long.parseLong(kv[1]);
        }
      }
      stats.put(name, new Stat(calls, usec));
    }
    return stats;
  }

  private static void expect(String reply, String expected, String server) throws IOException {
    if (!expected.equals(reply)) {
      throw new IOException(URI.create(server).getPort() + ": " + reply);
    }
  }

  /** One command on a fresh connection; returns a status line as {@code +OK} or a bulk string's text. */
  private static String call(String server, String... args) throws IOException {
    URI u = URI.create(server);
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress(u.getHost(), u.getPort() < 0 ? 6379 : u.getPort()),
          (int) TIMEOUT.toMillis());
      socket.setSoTimeout((int) TIMEOUT.toMillis());
      StringBuilder b = new StringBuilder("*").append(args.length).append("\r\n");
      for (String a : args) {
        b.append('$').append(a.length()).append("\r\n").append(a).append("\r\n");
      }
      socket.getOutputStream().write(b.toString().getBytes(StandardCharsets.US_ASCII));
      socket.getOutputStream().flush();
      InputStream in = new BufferedInputStream(socket.getInputStream());
      String head = line(in);
      if (head.startsWith("-")) {
        throw new IOException(args[0] + " refused: " + head);
      }
      if (!head.startsWith("$")) {
        return head; // +OK
      }
      int length = Integer.parseInt(head.substring(1));
      byte[] body = in.readNBytes(Math.max(length, 0));
      if (body.length < length) {
        throw new IOException("connection closed in a reply");
      }
      return new String(body, StandardCharsets.UTF_8);
    }
  }

  private static String line(InputStream in) throws IOException {
    StringBuilder b = new StringBuilder();
    int c;
    while ((c = in.read()) != '\n') {
      if (c < 0) {
        throw new IOException("connection closed in a reply");
      }
      if (c != '\r') {
        b.append((char) c);
      }
    }
    return b.toString();
  }
}
