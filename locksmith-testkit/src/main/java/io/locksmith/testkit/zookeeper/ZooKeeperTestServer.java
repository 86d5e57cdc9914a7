package io.locksmith.testkit.zookeeper;

import io.locksmith.testkit.QuickRun;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Map;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

/**
 * One real ZooKeeper server running inside the test JVM (curator-test's {@code TestingServer}) on a
 * free port of {@code 127.0.0.1}, with its data in a temporary directory that {@link #close()} deletes.
 * It can be stopped and restarted on the same port with the same data, which is how tests simulate a
 * short outage: sessions and their ephemeral nodes survive a restart that is shorter than their timeout.
 *
 * <pre>{@code
 * try (ZooKeeperTestServer zk = ZooKeeperTestServer.start()) {
 *   LockClient locks = ZooKeeperLockClient.create(zk.uri());
 * }
 * }</pre>
 *
 * <p>ZooKeeper's embedded server writes a configuration file into {@code java.io.tmpdir} at every start;
 * this class deletes the ones of its own servers.
 *
 * <p>The server ticks every {@link Builder#tickTime(Duration) tick} (1 s by default), which bounds the
 * session timeouts it accepts. Four-letter words are enabled ({@link FourLetterWords}); the admin HTTP
 * server is not.
 *
 * <p>Thread-safety: the methods may be called from any thread, but {@link #stop()}, {@link #restart()}
 * and {@link #close()} must not race each other.
 */
public final class ZooKeeperTestServer implements ZooKeeperTarget {
  /** Default server tick, 1 s (as curator-test): sessions of 1 s to 20 s are accepted. */
  public static final Duration DEFAULT_TICK_TIME = Duration.ofSeconds(1);

  private final TestingServer server;
  private final InstanceSpec spec;
  private volatile boolean running = true;

  private ZooKeeperTestServer(TestingServer server, InstanceSpec spec) {
    this.server = server;
    this.spec = spec;
  }

  /**
   * Starts a server with the defaults.
   *
   * @return the running server
   * @throws IllegalStateException if it does not start
   */
  public static ZooKeeperTestServer start() {
    return builder().start();
  }

  /** @return a builder with the defaults */
  public static Builder builder() {
    return new Builder();
  }

  @Override
  public String connectString() {
    return server.getConnectString();
  }

  /** @return {@code 127.0.0.1} */
  public String host() {
    return spec.getHostname();
  }

  /** @return the client port, the same across {@link #restart()} */
  public int port() {
    return server.getPort();
  }

  /** @return the server's data directory (snapshots and transaction log), deleted by {@link #close()} */
  public java.nio.file.Path dataDirectory() {
    return spec.getDataDirectory().toPath();
  }

  /** @return the server's tick */
  public Duration tickTime() {
    return Duration.ofMillis(spec.getTickTime());
  }

  /**
   * Stops the server (connections drop at once); data and port are kept for {@link #restart()}.
   *
   * @throws UncheckedIOException if stopping fails
   */
  public void stop() {
    try {
      server.stop();
      running = false;
    } catch (IOException e) {
      throw new UncheckedIOException("stopping " + this + " failed", e);
    }
  }

  /**
   * Starts a stopped server again on the same port with the same data (its sessions are reloaded with a
   * fresh timeout, so their ephemeral nodes survive).
   *
   * @throws IllegalStateException if it does not start
   */
  public void restart() {
    try {
      server.restart();
      running = true;
      Specs.deleteConfigurationFiles(java.util.List.of(port()));
    } catch (Exception e) {
      throw new IllegalStateException("restarting " + this + " failed: " + e, e);
    }
  }

  /** @return whether the server runs (not stopped or closed) */
  public boolean isRunning() {
    return running;
  }

  /**
   * @param command a four-letter word, e.g. {@code "wchs"}
   * @return the server's reply
   * @throws UncheckedIOException if the server does not answer within 5 s
   */
  public String fourLetterWord(String command) {
    return FourLetterWords.send(host(), port(), command, Duration.ofSeconds(5));
  }

  /**
   * @return {@code mntr}'s metrics, e.g. {@code zk_watch_count}
   * @throws UncheckedIOException if the server does not answer within 5 s
   */
  public Map<String, String> metrics() {
    return FourLetterWords.monitor(host(), port(), Duration.ofSeconds(5));
  }

  /** Stops the server and deletes its data; idempotent, never throws. */
  @Override
  public void close() {
    running = false;
    try {
      server.close();
    } catch (IOException | RuntimeException e) {
      // best effort: the data directory is temporary
    }
  }

  @Override
  public String toString() {
    return "ZooKeeperTestServer[" + connectString() + "]";
  }

  /** Builds and starts a {@link ZooKeeperTestServer}; not thread-safe. */
  public static final class Builder {
    private Duration tickTime = DEFAULT_TICK_TIME;
    private Duration containerCheckInterval;
    private int port;

    private Builder() {}

    /**
     * The client port on {@code 127.0.0.1}.
     *
     * @param port 1..65535, or 0 (the default) for a free port
     * @return this builder
     * @throws IllegalArgumentException if out of range
     */
    public Builder port(int port) {
      if (port < 0 || port > 65535) {
        throw new IllegalArgumentException("port out of range: " + port);
      }
      this.port = port;
      return this;
    }

    /**
     * The server's tick: it accepts session timeouts from 1 tick (curator-test's minimum) to 20 ticks
     * (ZooKeeper's default maximum), clamping anything outside, and expires sessions on tick boundaries.
     * Shorter ticks let tests use shorter sessions.
     *
     * @param tickTime 10 ms to 10 s
     * @return this builder
     */
    public Builder tickTime(Duration tickTime) {
      this.tickTime = tickTime;
      return this;
    }

    /**
     * How often the server looks for empty container nodes to delete (ZooKeeper's default is 1 minute).
     * Set through the {@code znode.container.checkIntervalMs} system property while the server starts,
     * so servers started at the same time from other threads may see it too.
     *
     * @param interval 10 ms to 1 h, or null for ZooKeeper's default
     * @return this builder
     */
    public Builder containerCheckInterval(Duration interval) {
      this.containerCheckInterval = interval;
      return this;
    }

    /**
     * @return the running server
     * @throws IllegalArgumentException if a setting is out of range
     * @throws IllegalStateException if the server does not start
     */
    public ZooKeeperTestServer start() {
      QuickRun.checkServerAllowed("ZooKeeper");
      InstanceSpec spec = Specs.spec(tickTime, 0, port == 0 ? -1 : port);
      return Specs.withContainerInterval(containerCheckInterval, () -> {
        try {
          ZooKeeperTestServer server = new ZooKeeperTestServer(new TestingServer(spec, true), spec);
          Specs.deleteConfigurationFiles(java.util.List.of(server.port()));
          return server;
        } catch (Exception e) {
          throw new IllegalStateException("ZooKeeper test server did not start: " + e, e);
        }
      });
    }
  }
}
