package io.locksmith.redis;

import io.lettuce.core.RedisURI;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Tells a TLS connect that timed out on a plain-text port from a hung server. Stateless and thread-safe;
 * the probe runs on a daemon thread of its own and never throws: an address that does not answer is
 * simply not the cause.
 */
final class TlsTimeoutDiagnosis {
  private TlsTimeoutDiagnosis() {}

  /**
   * A TLS connection attempt that timed out may have reached a port that serves plain text: such a
   * server waits for a command while the client waits for the TLS handshake, so it looks like a hung
   * server. Before reporting a timeout, ask each address once in plain text; a Redis reply means the
   * configuration is wrong, not the server down.
   *
   * @param tls whether the attempt used TLS (else {@code attempt} is returned as it is)
   * @param addresses where to probe: the Cluster seeds, the sentinels, or the one node
   * @return {@code attempt}, or on its timeout a configuration error if an address answered plain text
   */
  static CompletableFuture<Void> diagnose(boolean tls, CompletableFuture<Void> attempt, List<RedisURI> addresses,
      Duration commandTimeout, String description) {
    if (!tls) {
      return attempt;
    }
    return attempt.exceptionallyCompose(failure -> {
      if (!RedisExceptions.isTimeout(failure)) {
        return CompletableFuture.failedFuture(failure);
      }
      long probeMillis = Math.max(1, Math.min(commandTimeout.toMillis(), 1000));
      CompletableFuture<Void> diagnosed = new CompletableFuture<>();
      Thread probe = new Thread(() -> {
        for (RedisURI a : addresses) {
          if (speaksPlainRedis(a.getHost(), a.getPort(), (int) probeMillis)) {
            diagnosed.completeExceptionally(RedisExceptions.configuration("connect to " + description,
                a.getHost() + ":" + a.getPort() + " answered a plain-text PING: it does not serve TLS on that"
                    + " port (use a redis:// URI, or the server's TLS port)", RedisExceptions.unwrap(failure)));
            return;
          }
        }
        diagnosed.completeExceptionally(failure);
      }, "locksmith-tls-probe");
      probe.setDaemon(true);
      probe.start();
      return diagnosed;
    });
  }

  /** Whether a plain-text {@code PING} to the address gets a RESP reply ({@code +PONG} or an error). */
  static boolean speaksPlainRedis(String host, int port, int timeoutMillis) {
    try (java.net.Socket s = new java.net.Socket()) {
      s.connect(new InetSocketAddress(host, port), timeoutMillis);
      s.setSoTimeout(timeoutMillis);
      s.getOutputStream().write("PING\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      int first = s.getInputStream().read();
      return first == '+' || first == '-';
    } catch (java.io.IOException e) {
      return false;
    }
  }
}
