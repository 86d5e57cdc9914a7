package io.locksmith.cli;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.locksmith.bench.HoldingStockStore;
import io.locksmith.recipes.Sale;
import io.locksmith.recipes.StockStore;
import io.locksmith.recipes.SegmentedStock;
import io.locksmith.redis.RedisLockClient;
import io.locksmith.redis.RedisStockStore;
import io.locksmith.testkit.ProcessSignals;
import io.locksmith.testkit.RedisServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code locksmith demo}: the story of why a lock needs fencing, on a shared inventory, with worker
 * processes contending through an embedded Redis (or one given by {@code --uri}).
 *
 * <ol>
 *   <li>naive {@code SET NX PX} + {@code DEL} lock: work outlives the lock, updates are lost;</li>
 *   <li>Locksmith lock, the token admitted at each read and checked at each write: no update lost;</li>
 *   <li>a holder frozen with SIGSTOP past its lease, thawed after the next holder's read and before
 *       its write: the frozen one's late write is rejected by the fencing token;</li>
 *   <li>the same pause against the old write-only fence: the late write is accepted and the next
 *       holder's write overwrites it, one update lost. This row shows why the token is admitted at the
 *       read; it is not Locksmith's recipe and does not count towards the exit code.</li>
 *   <li>a hot item's stock split into segments ({@link SegmentedStock}): threads sell it out through one
 *       segment, then through eight, each sale holding its segment for a moment; both sell exactly the
 *       stock, and the segments sell it faster.</li>
 * </ol>
 *
 * Exits 1 if Locksmith lost an update, a stale write was accepted or the segmented stock was oversold.
 */
final class Demo {
  private static final Duration PHASE_LIMIT = Duration.ofSeconds(60);

  private final PrintStream out;
  private final int stock;
  private final int processes;
  private final int threads;
  private final List<Process> children = new ArrayList<>();
  private String uri;

  private Demo(PrintStream out, int stock, int processes, int threads) {
    this.out = out;
    this.stock = stock;
    this.processes = processes;
    this.threads = threads;
  }

  static int run(Args args, PrintStream out) throws Exception {
    Demo demo = new Demo(out, args.intValue("items", 100, 10, 100_000),
        args.intValue("processes", 2, 2, 16), args.intValue("threads", 4, 1, 64));
    String json = args.get("json", null);
    Optional<String> external = Optional.ofNullable(args.get("uri", null));
    Thread cleanup = new Thread(demo::killChildren, "locksmith-demo-cleanup");
    Runtime.getRuntime().addShutdownHook(cleanup);
    try {
      if (external.isPresent()) {
        demo.uri = external.get();
        return demo.play(json, "Redis at " + external.get().replaceAll("//[^@/]*@", "//***@"));
      }
      out.println("Starting an embedded Redis (testkit launcher: redis-server from PATH or the binary "
          + "shipped in com.github.codemonstur:embedded-redis)...");
      try (RedisServer server = RedisServer.start()) {
        demo.uri = server.uri();
        return demo.play(json, "embedded Redis " + server.version() + " on port " + server.port());
      }
    } finally {
      demo.killChildren();
      Runtime.getRuntime().removeShutdownHook(cleanup);
    }
  }

  private record PhaseResult(long sold, int stockLeft, long lostUpdates, long staleRejected) {}

  /** One sell-out of the hot item through {@code segments} segments. */
  private record SegmentedRun(int segments, long sold, long left, long millis) {
    double salesPerSecond() {
      return sold * 1000.0 / Math.max(1, millis);
    }
  }

  /** Units of the hot item, threads selling it, and the work each sale does under its segment's lock. */
  private static final int HOT_UNITS = 200;
  private static final int HOT_THREADS = 8;
  private static final Duration HOT_HOLD = Duration.ofMillis(2);

  private int play(String jsonFile, String where) throws Exception {
    out.printf("Inventory of %d items; %d worker JVMs x %d threads each sell one item at a time: read the%n"
        + "stock, work a few ms, write stock - 1. Server: %s.%n%n", stock, processes, threads, where);
    RedisClient redis = RedisClient.create(uri);
    PhaseResult naive;
    PhaseResult locksmith;
    PhaseResult paused;
    PhaseResult writeOnly;
    List<SegmentedRun> segmented = new ArrayList<>();
    try (StatefulRedisConnection<String, String> connection = redis.connect()) {
      Inventory inventory = new Inventory(connection.sync());
      out.println("1/5 naive lock: SET lock NX PX, blind DEL ...");
      naive = sellingPhase(inventory, "naive");
      out.println("2/5 Locksmith lock; the token is admitted at the read and checked at the write ...");
      locksmith = sellingPhase(inventory, "locksmith");
      out.println("3/5 a holder is frozen (SIGSTOP) past its lease and thawed between the next holder's read"
          + " and write ...");
      paused = pausePhase(inventory, true);
      out.println("4/5 the same pause against a fence checked only at the write (the old recipe) ...");
      writeOnly = pausePhase(inventory, false);
      out.printf("5/5 a hot item of %d units split into segments: %d threads sell one unit at a time, each sale%n"
          + "    holding its segment %d ms; sold out through 1 segment, then through 8 ...%n", HOT_UNITS,
          HOT_THREADS, HOT_HOLD.toMillis());
      StockStore store = new HoldingStockStore(RedisStockStore.of(connection.sync(), "demo-stock"), HOT_HOLD);
      for (int segments : new int[] {1, 8}) {
        segmented.add(sellOut(store, segments));
      }
    } finally {
      redis.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }

    out.println();
    out.println("| phase                                  | sold | stock left | lost updates | stale writes rejected |");
    out.println("|----------------------------------------|-----:|-----------:|-------------:|----------------------:|");
    row("naive SET NX PX + DEL", naive, "n/a");
    row("Locksmith lock + fenced read and write", locksmith, Long.toString(locksmith.staleRejected()));
    row("Locksmith, holder paused past lease", paused, Long.toString(paused.staleRejected()));
    row("same pause, fence at write only (old)", writeOnly, Long.toString(writeOnly.staleRejected()));
    out.println();
    out.printf("naive: %d sales recorded for %d items taken from stock: %d updates lost (overselling).%n",
        naive.sold(), stock - naive.stockLeft(), naive.lostUpdates());
    out.printf("Locksmith: %d updates lost. The paused holder's late write was %s by the fencing token.%n",
        locksmith.lostUpdates() + paused.lostUpdates(),
        paused.staleRejected() > 0 ? "REJECTED" : "not rejected (!)");
    out.printf("Fenced only at the write (the old recipe), the same late write was %s; lost updates: %d. Admit"
        + " the token at the first access (docs/fencing.md).%n", writeOnly.staleRejected() > 0 ? "rejected"
        : "accepted", writeOnly.lostUpdates());
    out.println();
    out.println("| segments | sold | left | sales/s |");
    out.println("|---------:|-----:|-----:|--------:|");
    long oversold = 0;
    long left = 0;
    for (SegmentedRun r : segmented) {
      out.printf("| %8d | %4d | %4d | %7.0f |%n", r.segments(), r.sold(), r.left(), r.salesPerSecond());
      oversold += Math.max(0, r.sold() - HOT_UNITS);
      left += r.left();
    }
    double speedup = segmented.get(1).salesPerSecond() / segmented.get(0).salesPerSecond();
    out.printf("Segmented stock: every unit sold exactly once either way (oversold: %d); 8 segments sold it"
        + " %.1f x as fast as 1 (docs/recipes.md).%n", oversold, speedup);

    if (jsonFile != null) {
      String json = String.format("{\"naiveLostUpdates\": %d, \"locksmithLostUpdates\": %d, "
          + "\"staleWritesRejected\": %d, \"writeOnlyFenceLostUpdates\": %d, \"segmentedOversold\": %d, "
          + "\"segmentedUnitsLeft\": %d, \"segmentedSpeedupPercent\": %d}%n", naive.lostUpdates(),
          locksmith.lostUpdates() + paused.lostUpdates(), locksmith.staleRejected() + paused.staleRejected(),
          writeOnly.lostUpdates(), oversold, left, Math.round(speedup * 100));
      Files.writeString(Path.of(jsonFile), json, StandardCharsets.UTF_8);
      out.println("wrote " + jsonFile);
    }
    boolean ok = locksmith.lostUpdates() == 0 && paused.lostUpdates() == 0 && paused.staleRejected() > 0
        && oversold == 0 && left == 0;
    if (naive.lostUpdates() == 0) {
      out.println("note: the naive lock happened to lose no update this run; try more --threads.");
    }
    return ok ? 0 : 1;
  }

  /** Sells the hot item out through {@code segments} segments with {@link #HOT_THREADS} threads. */
  private SegmentedRun sellOut(StockStore store, int segments) throws InterruptedException {
    try (RedisLockClient locks = RedisLockClient.create(uri)) {
      SegmentedStock stock = SegmentedStock.builder(locks, store, "demo-hot-" + segments + "-" + System.nanoTime())
          .segments(segments).lockWait(PHASE_LIMIT).build();
      stock.refill(HOT_UNITS);
      AtomicLong sold = new AtomicLong();
      List<Thread> sellers = new ArrayList<>();
      long start = System.nanoTime();
      for (int t = 0; t < HOT_THREADS; t++) {
        Thread seller = new Thread(() -> {
          while (true) {
            Sale sale = stock.trySell(1);
            if (!sale.sold()) {
              return; // sold out
            }
            sold.incrementAndGet();
          }
        }, "demo-seller-" + t);
        seller.start();
        sellers.add(seller);
      }
      for (Thread t : sellers) {
        t.join(PHASE_LIMIT.toMillis());
      }
      long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      return new SegmentedRun(segments, sold.get(), stock.total(), millis);
    }
  }

  private void row(String phase, PhaseResult r, String rejected) {
    out.printf("| %-38s | %4d | %10d | %12d | %21s |%n", phase, r.sold(), r.stockLeft(), r.lostUpdates(), rejected);
  }

  private PhaseResult sellingPhase(Inventory inventory, String mode) throws Exception {
    inventory.reset(stock);
    List<Worker> workers = new ArrayList<>();
    for (int p = 0; p < processes; p++) {
      workers.add(startWorker("--mode", mode, "--threads", Integer.toString(threads),
          "--max-run", PHASE_LIMIT.toSeconds() + "s"));
    }
    long reported = 0;
    for (Worker w : workers) {
      reported += w.resultSold(PHASE_LIMIT.plusSeconds(30));
    }
    long sold = inventory.sold();
    if (sold != reported) {
      throw new IllegalStateException("workers reported " + reported + " sales, the store counted " + sold);
    }
    int left = inventory.stock();
    return new PhaseResult(sold, left, sold - (stock - left), inventory.staleRejected());
  }

  /**
   * The interleaving that decides whether a fence is placed right. The victim takes the lock and reads;
   * it is frozen past its lease; the seller is granted the lock and reads; the victim is thawed and
   * writes; then the seller writes. Admitted at the read, the seller's read has raised the fence and the
   * victim's write is rejected. Fenced only at the write ({@code admit} false, the old recipe), the
   * victim's token is still the largest the store has seen, its write is accepted, and the seller's
   * write, computed from its earlier read, overwrites it: one update lost.
   */
  private PhaseResult pausePhase(Inventory inventory, boolean admit) throws Exception {
    int initial = 10;
    int sellerItems = 3;
    inventory.reset(initial);
    String prefix = admit ? "" : "write-only-";
    Worker victim = startWorker("--mode", prefix + "victim");
    String holding = victim.awaitLine("HOLDING", Duration.ofSeconds(30));
    ProcessSignals.pause(victim.process.pid());
    out.println("    frozen process " + victim.process.pid() + " while " + holding.toLowerCase());
    Worker seller;
    try {
      seller = startWorker("--mode", prefix + "seller", "--items", Integer.toString(sellerItems));
      String read = seller.awaitLine("READ", Duration.ofSeconds(60));
      out.println("    other process, granted the lock after the lease ran out: " + read.toLowerCase());
    } finally {
      ProcessSignals.resume(victim.process.pid());
    }
    victim.send("GO");
    String write = victim.awaitLine("WRITE", Duration.ofSeconds(30));
    out.println("    thawed process " + victim.process.pid() + " before the other's write: " + write.toLowerCase());
    victim.awaitExit(Duration.ofSeconds(30));
    seller.send("GO");
    long sold = seller.resultSold(Duration.ofSeconds(60));
    seller.lines.stream().filter(l -> l.startsWith("SOLD")).forEach(l -> out.println("    other process: " + l.toLowerCase()));
    if (sold != sellerItems) {
      throw new IllegalStateException("the other process sold " + sold + " of " + sellerItems);
    }
    long recorded = inventory.sold();
    int left = inventory.stock();
    return new PhaseResult(recorded, left, recorded - (initial - left), inventory.staleRejected());
  }

  // ------------------------------------------------------------------ child JVMs

  private Worker startWorker(String... workerArgs) throws IOException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> cmd = new ArrayList<>(List.of(java, "-Xmx256m", "-XX:TieredStopAtLevel=1",
        "-cp", System.getProperty("java.class.path"), Main.class.getName(), "demo-worker", "--uri", uri));
    cmd.addAll(List.of(workerArgs));
    Process process = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    if (workerArgs.length < 2 || !workerArgs[1].endsWith("victim") && !workerArgs[1].endsWith("seller")) {
      process.getOutputStream().close(); // only the pause phase's workers read stdin
    }
    synchronized (children) {
      children.add(process);
    }
    return new Worker(process);
  }

  private void killChildren() {
    synchronized (children) {
      for (Process p : children) {
        if (p.isAlive()) {
          ProcessSignals.resume(p.pid());
          p.destroyForcibly();
        }
      }
    }
  }

  /** A worker JVM whose stdout lines are collected by a reader thread. */
  private static final class Worker {
    final Process process;
    final List<String> lines = new ArrayList<>();
    final BlockingQueue<String> fresh = new LinkedBlockingQueue<>();

    Worker(Process process) {
      this.process = process;
      Thread reader = new Thread(() -> {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
          for (String line; (line = r.readLine()) != null; ) {
            fresh.add(line);
          }
        } catch (IOException ignored) {
          // the process ended
        } finally {
          fresh.add("\u0000EOF");
        }
      }, "locksmith-demo-reader-" + process.pid());
      reader.setDaemon(true);
      reader.start();
    }

    /** Writes one line to the worker's stdin. */
    void send(String line) throws IOException {
      process.getOutputStream().write((line + "\n").getBytes(StandardCharsets.UTF_8));
      process.getOutputStream().flush();
    }

    String awaitLine(String prefix, Duration within) throws InterruptedException {
      long deadline = System.nanoTime() + within.toNanos();
      while (true) {
        String line = fresh.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        if (line == null || line.equals("\u0000EOF")) {
          throw new IllegalStateException("worker " + process.pid() + " did not print " + prefix + " within "
              + within + (line == null ? "" : " (it exited with " + exitCode() + ")"));
        }
        lines.add(line);
        if (line.startsWith(prefix)) {
          return line;
        }
      }
    }

    long resultSold(Duration within) throws InterruptedException {
      String result = awaitLine("RESULT", within);
      awaitExit(within);
      return Long.parseLong(result.substring(result.indexOf("sold=") + 5).trim());
    }

    void awaitExit(Duration within) throws InterruptedException {
      if (!process.waitFor(within.toMillis(), TimeUnit.MILLISECONDS)) {
        process.destroyForcibly();
        throw new IllegalStateException("worker " + process.pid() + " did not exit within " + within);
      }
    }

    private String exitCode() {
      return process.isAlive() ? "nothing yet" : Integer.toString(process.exitValue());
    }
  }

}
