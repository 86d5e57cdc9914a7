package io.locksmith.testkit.zookeeper;

import java.time.Duration;
import java.util.function.Supplier;
import org.apache.curator.test.InstanceSpec;

/** Server specifications and start-up settings shared by the servers of this package. */
final class Specs {
  static final String HOST = "127.0.0.1";
  private static final String CONTAINER_INTERVAL = "znode.container.checkIntervalMs";

  static {
    // Test servers do not fsync their transaction log: on a loaded build machine an fsync takes up to
    // hundreds of milliseconds, which made every write (and so every grant) that slow. The log is still
    // written, so a server restarted in the same JVM (or a whole ensemble) finds its data. Read once by
    // ZooKeeper when its log class loads; a value set by the build (-Dzookeeper.forceSync=yes) wins.
    if (System.getProperty("zookeeper.forceSync") == null) {
      System.setProperty("zookeeper.forceSync", "no");
    }
  }

  private Specs() {}

  /**
   * @param serverId the member id in an ensemble, or 0 for a standalone server
   * @throws IllegalArgumentException if {@code tickTime} is out of range
   */
  static InstanceSpec spec(Duration tickTime, int serverId) {
    return spec(tickTime, serverId, -1);
  }

  /**
   * @param serverId the member id in an ensemble, or 0 for a standalone server
   * @param clientPort the client port, or -1 for a free one
   * @throws IllegalArgumentException if {@code tickTime} is out of range
   */
  static InstanceSpec spec(Duration tickTime, int serverId, int clientPort) {
    if (tickTime == null || tickTime.toMillis() < 10 || tickTime.compareTo(Duration.ofSeconds(10)) > 0) {
      throw new IllegalArgumentException("tickTime must be from 10 ms to 10 s, was " + tickTime);
    }
    // data directory: a fresh temporary one, deleted on close; ports: free ones unless a client port is given.
    // curator-test names no client address, so a standalone server would listen on every interface: bind it to
    // the loopback address (an ensemble member's address is in its server line).
    java.util.Map<String, Object> properties = serverId > 0 ? null : java.util.Map.of("clientPortAddress", HOST);
    return new InstanceSpec(null, clientPort, -1, -1, true, serverId > 0 ? serverId : -1, (int) tickTime.toMillis(),
        -1, properties, HOST);
  }

  /**
   * Deletes the configuration files ZooKeeper's embedded server leaves in {@code java.io.tmpdir} at every
   * start ({@code zookeeper.configuration<N>.properties}), for the servers on these client ports only:
   * other JVMs may be starting servers of their own. Best effort.
   */
  static void deleteConfigurationFiles(java.util.Collection<Integer> clientPorts) {
    java.nio.file.Path tmp = java.nio.file.Path.of(System.getProperty("java.io.tmpdir"));
    try (java.nio.file.DirectoryStream<java.nio.file.Path> files =
        java.nio.file.Files.newDirectoryStream(tmp, "zookeeper.configuration*.properties")) {
      for (java.nio.file.Path file : files) {
        String text = java.nio.file.Files.readString(file);
        for (int port : clientPorts) {
          if (text.contains("clientPort=" + port + System.lineSeparator()) || text.endsWith("clientPort=" + port)
              || text.contains("clientPort=" + port + "\n")) {
            java.nio.file.Files.deleteIfExists(file);
            break;
          }
        }
      }
    } catch (java.io.IOException | RuntimeException e) {
      // best effort: a leftover file is harmless
    }
  }

  /** Runs {@code start} with the container check interval set, if one is given. */
  static synchronized <T> T withContainerInterval(Duration interval, Supplier<T> start) {
    if (interval == null) {
      return start.get();
    }
    if (interval.toMillis() < 10 || interval.compareTo(Duration.ofHours(1)) > 0) {
      throw new IllegalArgumentException("containerCheckInterval must be from 10 ms to 1 h, was " + interval);
    }
    String before = System.getProperty(CONTAINER_INTERVAL);
    System.setProperty(CONTAINER_INTERVAL, Long.toString(interval.toMillis()));
    try {
      return start.get();
    } finally {
      if (before == null) {
        System.clearProperty(CONTAINER_INTERVAL);
      } else {
        System.setProperty(CONTAINER_INTERVAL, before);
      }
    }
  }
}
