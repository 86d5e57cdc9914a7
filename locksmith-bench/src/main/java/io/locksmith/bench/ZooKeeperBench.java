package io.locksmith.bench;

import io.locksmith.testkit.zookeeper.FourLetterWords;
import io.locksmith.testkit.zookeeper.ZooKeeperTestServer;
import io.locksmith.zookeeper.ZooKeeperLockClient;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code locksmith bench --backend zookeeper}: Locksmith's ZooKeeper backend next to Curator's
 * {@code InterProcessMutex} and Spring Integration's {@code ZookeeperLockRegistry}, in one JVM, on the same server (an embedded one unless a {@code zookeeper://}
 * URI is given), with the same alternating slices as the Redis runs. The server cost per cycle comes from
 * the server's own counters ({@code mntr}): requests received, and watch notifications sent; getChildren
 * replies per cycle are printed with the progress. Not thread-safe; one run at a time.
 */
public final class ZooKeeperBench {
  /** The peers {@code --against} accepts on ZooKeeper. */
  public static final List<String> PEERS = List.of("curator", "spring-zk");
  /** The scenarios that apply to ZooKeeper. */
  public static final Set<Scenario> SCENARIOS = EnumSet.of(Scenario.UNCONTENDED, Scenario.MANY_KEYS,
      Scenario.HOT_KEY, Scenario.HERD);

  private ZooKeeperBench() {}

  /**
   * @param settings the scenario, duration and threads ({@code settings.uri()}: a {@code zookeeper://} URI,
   *     or null for an embedded server; its {@code against} is not used)
   * @param against the peers, a subset of {@link #PEERS}
   * @param progress where to report progress
   * @return the results, Locksmith first
   * @throws IllegalArgumentException if the scenario does not apply or a peer is unknown
   * @throws Exception if the server cannot be started or an implementation fails
   */
  public static BenchReport run(BenchSettings settings, List<String> against, PrintStream progress) throws Exception {
    if (!SCENARIOS.contains(settings.scenario())) {
      throw new IllegalArgumentException("on ZooKeeper the scenarios are uncontended, many-keys, hot-key and herd,"
          + " not " + settings.scenario().cliName());
    }
    for (String peer : against) {
      if (!PEERS.contains(peer)) {
        throw new IllegalArgumentException("unknown ZooKeeper peer '" + peer + "'; peers: " + String.join(", ", PEERS));
      }
    }
    List<AutoCloseable> owned = new ArrayList<>();
    try {
      String uri = settings.uri();
      String version;
      if (uri == null) {
        ZooKeeperTestServer server = ZooKeeperTestServer.start();
        owned.add(server);
        uri = server.uri();
        version = "embedded";
      } else {
        version = "given";
      }
      String connect = uri.substring("zookeeper://".length());
      String firstHost = connect.split(",")[0];
      String host = firstHost.substring(0, firstHost.lastIndexOf(':'));
      int port = Integer.parseInt(firstHost.substring(firstHost.lastIndexOf(':') + 1).split("/")[0]);
      Map<LockImpl, List<String>> impls = new LinkedHashMap<>();
      LocksmithImpl locksmith = new LocksmithImpl("locksmith", ZooKeeperLockClient.builder().uri(uri)
          .options(io.locksmith.ClientOptions.builder().namespace("locksmith-bench").build()).build());
      owned.add(locksmith);
      impls.put(locksmith, List.of(uri));
      if (against.contains("curator")) {
        CuratorMutexImpl curator = new CuratorMutexImpl(connect);
        owned.add(curator);
        impls.put(curator, List.of(uri));
      }
      if (against.contains("spring-zk")) {
        SpringZooKeeperImpl spring = new SpringZooKeeperImpl(connect);
        owned.add(spring);
        impls.put(spring, List.of(uri));
      }
      return Bench.measure(settings, impls, "ZooKeeper (" + version + ")", progress,
          (impl, servers, sample, nanos) -> serverCost(impl, sample, nanos, host, port, progress));
    } finally {
      for (int i = owned.size() - 1; i >= 0; i--) {
        try {
          owned.get(i).close();
        } catch (Exception e) {
          progress.println("closing " + owned.get(i) + ": " + e);
        }
      }
    }
  }

  /**
   * Requests and watch notifications per cycle, from the differences of the server's counters over a
   * sample run (the server's own heartbeats and pings count too: a little noise).
   */
  private static double[] serverCost(LockImpl impl, Workload sample, long nanos, String host, int port,
      PrintStream progress) throws Exception {
    Map<String, String> before = FourLetterWords.monitor(host, port, Duration.ofSeconds(5));
    long cycles = sample.run(impl, nanos, false);
    Map<String, String> after = FourLetterWords.monitor(host, port, Duration.ofSeconds(5));
    if (cycles == 0) {
      return null;
    }
    double requests = delta(before, after, "zk_packets_received") / (double) cycles;
    double notifications = (delta(before, after, "zk_sum_node_deleted_watch_count")
        + delta(before, after, "zk_sum_node_changed_watch_count") + delta(before, after, "zk_sum_node_created_watch_count")
        + delta(before, after, "zk_sum_node_children_watch_count")) / (double) cycles;
    double listings = (delta(before, after, "zk_response_packet_get_children_cache_hits")
        + delta(before, after, "zk_response_packet_get_children_cache_misses")) / (double) cycles;
    progress.printf("server cost %-10s %.2f requests, %.2f watch notifications, %.2f getChildren per cycle (%d cycles)%n",
        impl.name(), requests, notifications, listings, cycles);
    return new double[] {requests, notifications};
  }

  private static long delta(Map<String, String> before, Map<String, String> after, String key) {
    return parse(after.get(key)) - parse(before.get(key));
  }

  private static long parse(String v) {
    if (v == null) {
      return 0;
    }
    try {
      return (long) Double.parseDouble(v);
    } catch (NumberFormatException e) {
      return 0;
    }
  }
}
