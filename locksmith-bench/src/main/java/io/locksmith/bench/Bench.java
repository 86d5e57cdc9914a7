package io.locksmith.bench;

import io.locksmith.redis.RedisLockClient;
import io.locksmith.redis.RedlockClient;
import io.locksmith.testkit.RedisServer;
import io.locksmith.testkit.TcpProxy;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs one scenario against Locksmith and its peers in one JVM, on the same server(s), in alternating
 * slices after a warm-up, so that drift of a noisy machine spreads over every implementation alike.
 * Not thread-safe; one run at a time.
 */
public final class Bench {
  private static final int SLICES = 5;

  private Bench() {}

  /**
   * Starts the servers it needs (unless given), and with an rtt a delaying proxy in front of each, runs the
   * scenario and stops them again.
   *
   * @param settings what to run
   * @param progress where to report progress, one line per step
   * @return the results, one per implementation
   * @throws Exception if a server cannot be started or an implementation fails
   */
  public static BenchReport run(BenchSettings settings, PrintStream progress) throws Exception {
    List<AutoCloseable> owned = new ArrayList<>();
    // what clients connect to -> the server behind it (differs only with an added rtt), for MONITOR
    Map<String, String> serverOf = new LinkedHashMap<>();
    try {
      String uri = settings.uri();
      String version;
      if (uri == null) {
        RedisServer server = RedisServer.start();
        owned.add(server);
        uri = server.uri();
        version = server.version();
      } else {
        version = "given";
      }
      uri = link(uri, settings, owned, serverOf);
      List<String> nodes = new ArrayList<>();
      if (settings.scenario() == Scenario.REDLOCK) {
        for (int i = 0; i < 5; i++) {
          String node;
          if (settings.nodes().isEmpty()) {
            RedisServer started = RedisServer.start();
            owned.add(started);
            node = started.uri();
          } else {
            node = settings.nodes().get(i);
          }
          nodes.add(link(node, settings, owned, serverOf));
        }
      }
      if (settings.processes() > 1) {
        return MultiProcessBench.run(settings, uri, serverOf.get(uri), version, progress);
      }
      Map<LockImpl, List<String>> impls = implementationsPatiently(settings, uri, nodes, owned);
      impls.replaceAll((impl, servers) -> servers.stream().map(serverOf::get).toList());
      return measure(settings, impls, version, progress,
          (impl, servers, sample, nanos) -> sampleServerCost(impl, servers, settings.rtt(), sample, nanos));
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
   * The URI clients use for {@code server}: the server itself, or with an added rtt a proxy in front of it
   * that holds back every chunk for half the rtt in each direction ({@link BenchSettings} has checked
   * that the URIs are plain {@code redis://host[:port]}).
   */
  private static String link(String server, BenchSettings s, List<AutoCloseable> owned,
      Map<String, String> serverOf) {
    if (s.rtt().isZero()) {
      serverOf.put(server, server);
      return server;
    }
    URI u = URI.create(server);
    TcpProxy proxy = TcpProxy.start(u.getHost(), u.getPort() < 0 ? 6379 : u.getPort());
    owned.add(proxy);
    proxy.delay(s.rtt().dividedBy(2));
    String via = "redis://" + (u.getRawUserInfo() == null ? "" : u.getRawUserInfo() + "@")
        + proxy.host() + ":" + proxy.port() + (u.getRawPath() == null ? "" : u.getRawPath())
        + (u.getRawQuery() == null ? "" : "?" + u.getRawQuery());
    serverOf.put(via, server);
    return via;
  }

  /**
   * Each implementation with the server URIs its commands go to (for MONITOR): Locksmith first, then the
   * peers in the order given. A multi-process run's child JVMs build the same list.
   */
  static Map<LockImpl, List<String>> implementations(BenchSettings s, String uri, List<String> nodes,
      List<AutoCloseable> owned) {
    Map<LockImpl, List<String>> impls = new LinkedHashMap<>();
    java.util.function.BiConsumer<LockImpl, List<String>> add = (impl, servers) -> {
      owned.add(impl);
      impls.put(impl, servers);
    };
    if (s.scenario() == Scenario.SEGMENTED) {
      // segment counts side by side on the same workload; peers do not apply (none ships this recipe)
      for (int segments : s.segments()) {
        add.accept(new SegmentedImpl(uri, segments, s.hold()), List.of(uri));
      }
      return impls;
    }
    add.accept(new LocksmithImpl("locksmith", RedisLockClient.create(uri)), List.of(uri));
    if (s.scenario() == Scenario.REDLOCK) {
      add.accept(new LocksmithImpl("locksmith-redlock", RedlockClient.builder().nodes(nodes).build()), nodes);
      if (s.against().contains("raw")) {
        add.accept(new RawLettuceImpl(uri), List.of(uri));
        add.accept(new RawQuorumImpl(nodes, false), nodes);
        add.accept(new RawQuorumImpl(nodes, true), nodes);
      }
      if (s.against().contains("redisson")) {
        add.accept(RedissonImpl.lock(uri), List.of(uri));
        add.accept(RedissonImpl.redLock(nodes), nodes);
      }
      return impls;
    }
    for (String peer : s.against()) {
      switch (peer) {
        case "raw" -> add.accept(new RawLettuceImpl(uri), List.of(uri));
        case "fenced-minimal" -> add.accept(new FencedMinimalImpl(uri), List.of(uri));
        case "locksmith-fair" ->
            add.accept(new LocksmithImpl(peer, RedisLockClient.create(uri), io.locksmith.LockClient::fairLock),
                List.of(uri));
        case "locksmith-rw" -> add.accept(new LocksmithImpl(peer, RedisLockClient.create(uri),
            (client, name) -> client.readWriteLock(name).writeLock(),
            (client, name) -> client.readWriteLock(name).readLock()), List.of(uri));
        case "locksmith-semaphore" -> add.accept(new LocksmithImpl(peer, RedisLockClient.create(uri),
            (client, name) -> client.semaphore(name, 1)), List.of(uri));
        case "redisson" -> add.accept(RedissonImpl.lock(uri), List.of(uri));
        case "redisson-fair" -> add.accept(RedissonImpl.fairLock(uri), List.of(uri));
        case "redisson-fenced" -> add.accept(RedissonImpl.fencedLock(uri), List.of(uri));
        case "spring" -> add.accept(new SpringImpl(uri), List.of(uri));
        default -> throw new IllegalArgumentException(peer);
      }
    }
    return impls;
  }

  /** How long building the implementations is retried; see {@link #implementationsPatiently}. */
  static final Duration CONNECT_PATIENCE = Duration.ofSeconds(20);

  /**
   * {@link #implementations}, retried for up to {@link #CONNECT_PATIENCE} if a client cannot connect: a cold
   * JVM on a loaded machine can miss a client's 2 s connection timeout on its very first connection (class
   * loading). What a failed attempt built is closed before the next.
   */
  static Map<LockImpl, List<String>> implementationsPatiently(BenchSettings s, String uri, List<String> nodes,
      List<AutoCloseable> owned) {
    long deadline = System.nanoTime() + CONNECT_PATIENCE.toNanos();
    while (true) {
      int mark = owned.size();
      try {
        return implementations(s, uri, nodes, owned);
      } catch (RuntimeException e) {
        List<AutoCloseable> built = new ArrayList<>(owned.subList(mark, owned.size()));
        owned.subList(mark, owned.size()).clear();
        for (int i = built.size() - 1; i >= 0; i--) {
          try {
            built.get(i).close();
          } catch (Exception closing) {
            e.addSuppressed(closing);
          }
        }
        if (System.nanoTime() - deadline > 0) {
          throw e;
        }
        System.err.println("bench: building the clients failed, retrying: " + e);
      }
    }
  }

  /** Measures what one implementation costs the server(s) per cycle, on a sample run of its workload. */
  @FunctionalInterface
  interface CostSampler {
    /**
     * @return requests per cycle and notifications per cycle (Redis: commands and PUBLISHes), optionally
     *     followed by the server's microseconds and calls per cycle ({@link #serverCost}); or null
     */
    double[] sample(LockImpl impl, List<String> servers, Workload sample, long nanos) throws Exception;
  }

  /** The warm-up, the alternating slices and the results, whatever the backend. */
  static BenchReport measure(BenchSettings s, Map<LockImpl, List<String>> impls, String version,
      PrintStream progress, CostSampler sampler) throws Exception {
    int threads = s.effectiveThreads();
    long sliceNanos = s.duration().toNanos() / SLICES;
    long warmupNanos = Math.min(sliceNanos, 2_000_000_000L);
    Map<LockImpl, Workload> workloads = new LinkedHashMap<>();
    for (LockImpl impl : impls.keySet()) {
      workloads.put(impl, new Workload(s.scenario(), threads, s.readers(), s.minCycles()));
      progress.printf("warming up %s%n", impl.name());
      workloads.get(impl).run(impl, warmupNanos, false);
    }
    for (int slice = 1; slice <= SLICES; slice++) {
      for (LockImpl impl : impls.keySet()) {
        long n = workloads.get(impl).run(impl, sliceNanos, true);
        progress.printf("slice %d/%d %-22s %d cycles%n", slice, SLICES, impl.name(), n);
      }
    }
    List<BenchResult> results = new ArrayList<>();
    for (Map.Entry<LockImpl, List<String>> e : impls.entrySet()) {
      LockImpl impl = e.getKey();
      double[] perOp = sampler.sample(impl, e.getValue(), new Workload(s.scenario(), threads, s.readers(),
              s.minCycles()),
          Math.min(sliceNanos, 1_000_000_000L));
      results.add(result(impl.name(), workloads.get(impl), perOp, s.scenario()));
    }
    String machine = Runtime.getRuntime().availableProcessors() + " cpus, Java "
        + System.getProperty("java.version");
    return new BenchReport(s.scenario(), threads, s.scenario() == Scenario.RW_MIX ? s.readers() : null,
        s.duration().toMillis(), s.rtt().toNanos() / 1000, version, machine, results);
  }

  /** What one implementation costs the server(s) per cycle; see {@link #serverCost}. */
  private static double[] sampleServerCost(LockImpl impl, List<String> servers, Duration rtt, Workload sample,
      long nanos) throws Exception {
    if (servers.isEmpty()) {
      return null; // not Redis
    }
    return serverCost(servers, rtt, () -> sample.run(impl, nanos, false));
  }

  /** Cycles that a sample run completes, counted by its caller. */
  @FunctionalInterface
  interface SampleRun {
    long run() throws Exception;
  }

  /**
   * Two sample runs after the measured slices: one with MONITOR on every server (commands sent by clients,
   * PUBLISHes, and which commands ran inside scripts), then one without it between {@code CONFIG RESETSTAT}
   * and {@code INFO commandstats} (the server's own time and calls; MONITOR would slow the server down and
   * inflate them). Either part is left out (a shorter or null array) where the server refuses it.
   *
   * @return commands, PUBLISHes, server microseconds and calls (scripts' inner ones included), each per
   *     cycle; only the first two if the statistics cannot be read; null if MONITOR is not allowed or no
   *     cycle completed
   */
  static double[] serverCost(List<String> servers, Duration rtt, SampleRun sample) throws Exception {
    MonitorSample seen = monitored(servers, rtt, sample);
    if (seen == null) {
      return null;
    }
    double[] stats = CommandStats.sample(servers, rtt, seen.scriptCallsPerOp(), sample);
    return stats == null ? new double[] {seen.commandsPerOp(), seen.publishesPerOp()}
        : new double[] {seen.commandsPerOp(), seen.publishesPerOp(), stats[0], stats[1]};
  }

  /**
   * What MONITOR saw, per cycle.
   *
   * @param commandsPerOp commands sent by clients
   * @param publishesPerOp PUBLISHes from anywhere
   * @param scriptCallsPerOp commands run inside scripts, by lower-case name
   */
  record MonitorSample(double commandsPerOp, double publishesPerOp, Map<String, Double> scriptCallsPerOp) {}

  /**
   * Runs {@code sample} with MONITOR on every server and divides the commands and PUBLISHes seen by the
   * cycles it reports.
   *
   * @return the counts per cycle, or null if MONITOR is not allowed or no cycle completed
   */
  static MonitorSample monitored(List<String> servers, Duration rtt, SampleRun sample) throws Exception {
    List<Monitor> monitors = new ArrayList<>();
    try {
      for (String server : servers) {
        URI u = URI.create(server);
        monitors.add(new Monitor(u.getHost(), u.getPort()));
      }
      monitors.forEach(Monitor::start);
      long cycles = sample.run();
      if (!rtt.isZero()) {
        // commands the last cycle sent without waiting for (Redlock's late nodes) may still be in a proxy
        TimeUnit.NANOSECONDS.sleep(rtt.toNanos());
      }
      long commands = 0;
      long publishes = 0;
      Map<String, Double> inner = new java.util.TreeMap<>();
      for (Monitor m : monitors) {
        m.stop();
        commands += m.clientCommands();
        publishes += m.publishes();
        m.scriptCalls().forEach((name, n) -> inner.merge(name, (double) n, Double::sum));
      }
      if (cycles == 0) {
        return null;
      }
      inner.replaceAll((name, n) -> n / cycles);
      return new MonitorSample((double) commands / cycles, (double) publishes / cycles, inner);
    } catch (IOException e) {
      return null; // MONITOR not allowed (e.g. a managed server): leave the field null
    } finally {
      monitors.forEach(Monitor::close);
    }
  }

  private static BenchResult result(String impl, Workload w, double[] perOp, Scenario scenario) {
    double seconds = w.measuredNanos / 1e9;
    boolean handoff = scenario == Scenario.HOT_KEY || scenario == Scenario.HERD;
    boolean contended = handoff || scenario == Scenario.RW_MIX;
    long min = Long.MAX_VALUE;
    long max = 0;
    for (long c : w.perThread) {
      min = Math.min(min, c);
      max = Math.max(max, c);
    }
    boolean anyHandoff = handoff && w.handoffs.getTotalCount() > 0;
    return new BenchResult(impl, w.ops / seconds,
        w.cycles.getTotalCount() == 0 ? null : w.cycles.getValueAtPercentile(50) / 1000.0,
        w.cycles.getTotalCount() == 0 ? null : w.cycles.getValueAtPercentile(99) / 1000.0,
        w.acquires.getTotalCount() == 0 ? null : w.acquires.getValueAtPercentile(50) / 1000.0,
        perOp == null ? null : perOp[0], perOp == null ? null : perOp[1],
        anyHandoff ? w.handoffs.getValueAtPercentile(50) / 1000.0 : null,
        anyHandoff ? w.handoffs.getValueAtPercentile(99) / 1000.0 : null,
        contended ? min : null, contended ? max : null, w.timeouts,
        scenario == Scenario.RW_MIX ? sides(w, seconds) : null).withServerTime(perOp);
  }

  /** The read side (threads {@code 0 .. readers-1}) and the write side (the others), each on its own. */
  private static BenchResult.Sides sides(Workload w, double seconds) {
    long[] read = java.util.Arrays.copyOfRange(w.perThread, 0, w.readers);
    long[] write = java.util.Arrays.copyOfRange(w.perThread, w.readers, w.perThread.length);
    return new BenchResult.Sides(side(read, w.readAcquires, seconds), side(write, w.writeAcquires, seconds));
  }

  private static BenchResult.Side side(long[] perThread, org.HdrHistogram.Histogram acquires, double seconds) {
    long cycles = java.util.Arrays.stream(perThread).sum();
    boolean any = acquires.getTotalCount() > 0;
    return new BenchResult.Side(perThread.length, cycles, cycles / seconds,
        java.util.Arrays.stream(perThread).min().orElse(0), java.util.Arrays.stream(perThread).max().orElse(0),
        any ? acquires.getValueAtPercentile(99) / 1000.0 : null, any ? acquires.getMaxValue() / 1000.0 : null);
  }
}
