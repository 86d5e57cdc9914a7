package io.locksmith.cli;

import io.lettuce.core.RedisClient;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.locksmith.DistributedLock;
import io.locksmith.Lease;
import io.locksmith.LockOptions;
import io.locksmith.redis.RedisLockClient;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One worker process of the demo. Sells items from the shared {@link Inventory} under a lock, in one of
 * its modes, and reports on stdout ({@code HOLDING …}, {@code READ …}, {@code WRITE …},
 * {@code RESULT sold=N}). The victim and the seller of the pause phase wait for a {@code GO} line on
 * stdin at the point where the demo stages the interleaving.
 */
final class DemoWorker {
  static final String LOCK = "demo:inventory";
  static final String NAIVE_LOCK = "demo:naive-lock";

  private final String uri;
  private final int threads;
  private final Duration thinkMax;
  private final long deadline;

  private DemoWorker(String uri, int threads, Duration thinkMax, Duration maxRun) {
    this.uri = uri;
    this.threads = threads;
    this.thinkMax = thinkMax;
    this.deadline = System.nanoTime() + maxRun.toNanos();
  }

  static int run(Args args) throws Exception {
    String mode = args.get("mode", "");
    DemoWorker worker = new DemoWorker(args.get("uri", ""), args.intValue("threads", 4, 1, 256),
        args.duration("think", Duration.ofMillis(6)), args.duration("max-run", Duration.ofSeconds(60)));
    switch (mode) {
      case "naive" -> worker.sellAll(false);
      case "locksmith" -> worker.sellAll(true);
      case "victim" -> worker.victim(true);
      case "seller" -> worker.seller(args.intValue("items", 3, 1, 1000), true);
      case "write-only-victim" -> worker.victim(false);
      case "write-only-seller" -> worker.seller(args.intValue("items", 3, 1, 1000), false);
      default -> throw new Args.UsageException("demo-worker --mode must be naive|locksmith|victim|seller|"
          + "write-only-victim|write-only-seller");
    }
    return 0;
  }

  /** Work done while holding the lock: the read-modify-write window. */
  private void think() throws InterruptedException {
    long micros = ThreadLocalRandom.current().nextLong(thinkMax.toNanos() / 1000 / 4, thinkMax.toNanos() / 1000 + 1);
    TimeUnit.MICROSECONDS.sleep(micros);
  }

  private boolean timeLeft() {
    return System.nanoTime() - deadline < 0;
  }

  /** All threads sell until the stock is gone, under the naive lock or under Locksmith. */
  private void sellAll(boolean locksmith) throws Exception {
    RedisClient redis = RedisClient.create(uri);
    AtomicInteger sold = new AtomicInteger();
    List<Thread> workers = new ArrayList<>();
    List<StatefulRedisConnection<String, String>> connections = new ArrayList<>();
    try (RedisLockClient locks = locksmith ? RedisLockClient.create(uri) : null) {
      for (int t = 0; t < threads; t++) {
        StatefulRedisConnection<String, String> connection = redis.connect();
        connections.add(connection);
        RedisCommands<String, String> commands = connection.sync();
        Inventory inventory = new Inventory(commands);
        Runnable body = locksmith
            ? () -> sellWithLocksmith(locks.lock(LOCK, LockOptions.watched(Duration.ofSeconds(2))), inventory, sold)
            : () -> sellWithNaiveLock(commands, inventory, sold);
        Thread thread = new Thread(body, "seller-" + t);
        workers.add(thread);
        thread.start();
      }
      for (Thread t : workers) {
        t.join();
      }
    } finally {
      connections.forEach(StatefulRedisConnection::close);
      redis.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }
    System.out.println("RESULT sold=" + sold.get());
  }

  /**
   * The lock from the blog posts: SET NX PX, then a blind DEL. When the work outlives the expiry, a second
   * seller gets in, and the first one's DEL even frees the second one's lock.
   */
  private void sellWithNaiveLock(RedisCommands<String, String> redis, Inventory inventory, AtomicInteger sold) {
    SetArgs nxpx = SetArgs.Builder.nx().px(Math.max(1, thinkMax.toMillis() / 2));
    try {
      while (timeLeft()) {
        while (!"OK".equals(redis.set(NAIVE_LOCK, "me", nxpx))) {
          Thread.sleep(1); // the naive lock spins
          if (!timeLeft()) {
            return;
          }
        }
        try {
          int stock = inventory.stock();
          if (stock <= 0) {
            return;
          }
          think();
          inventory.write(stock - 1);
          inventory.recordSale();
          sold.incrementAndGet();
        } finally {
          redis.del(NAIVE_LOCK);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Locksmith's recipe: the token is admitted at the read, the first access of the stock under the lock,
   * and checked again at the write. A holder superseded before its read is refused there.
   */
  private void sellWithLocksmith(DistributedLock lock, Inventory inventory, AtomicInteger sold) {
    try {
      while (timeLeft()) {
        try (Lease lease = lock.acquire(Duration.ofSeconds(30))) {
          OptionalInt read = inventory.fencedRead(lease.fencingToken());
          if (read.isEmpty()) {
            continue; // superseded already: this holder's lease is gone
          }
          int stock = read.getAsInt();
          if (stock <= 0) {
            return;
          }
          think();
          if (inventory.fencedWrite(lease.fencingToken(), stock - 1)) {
            inventory.recordSale();
            sold.incrementAndGet();
          }
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Reads the stock as the holder of {@code token}: admitted through the fence, or plainly (old recipe). */
  private static int read(Inventory inventory, long token, boolean admit) {
    if (!admit) {
      return inventory.stock();
    }
    return inventory.fencedRead(token).orElseThrow(() -> new IllegalStateException(
        "token " + token + " was refused at the read: superseded before its first access"));
  }

  private static boolean write(Inventory inventory, long token, int stock, boolean admit) {
    return admit ? inventory.fencedWrite(token, stock) : inventory.writeOnlyFencedWrite(token, stock);
  }

  /** Blocks until the demo sends {@code GO} on stdin. */
  private static void awaitGo(BufferedReader stdin) throws IOException {
    for (String line; (line = stdin.readLine()) != null; ) {
      if (line.trim().equals("GO")) {
        return;
      }
    }
    throw new IllegalStateException("stdin closed before GO");
  }

  /**
   * Takes the lock, reads the stock, announces it holds the lock, then waits for {@code GO}: its slow
   * work. The demo freezes this process (SIGSTOP) right after the announcement, past its lease, and
   * thaws it once the next holder has read; then it writes with its old token, as a paused process does.
   * Admitted at its read, the fence rejects that write; with the old write-only fence it is accepted.
   */
  private void victim(boolean admit) throws Exception {
    RedisClient redis = RedisClient.create(uri);
    BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    try (RedisLockClient locks = RedisLockClient.create(uri);
        StatefulRedisConnection<String, String> connection = redis.connect()) {
      Inventory inventory = new Inventory(connection.sync());
      Lease lease = locks.lock(LOCK, LockOptions.watched(Duration.ofSeconds(1))).acquire(Duration.ofSeconds(30));
      int stock = read(inventory, lease.fencingToken(), admit);
      System.out.println("HOLDING token=" + lease.fencingToken() + " stock=" + stock);
      System.out.flush();
      awaitGo(stdin); // slow work: the demo pauses the whole process in here
      boolean accepted = write(inventory, lease.fencingToken(), stock - 1, admit);
      if (accepted) {
        inventory.recordSale();
      }
      System.out.println("WRITE token=" + lease.fencingToken() + " stock=" + (stock - 1) + " "
          + (accepted ? "accepted" : "rejected") + " leaseState=" + lease.state());
      System.out.flush();
      lease.release();
    } finally {
      redis.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }
  }

  /**
   * Sells a few items one by one with Locksmith, printing each token. After its first read it prints
   * {@code READ …} and waits for {@code GO} before writing, so the demo can thaw the victim in between.
   */
  private void seller(int items, boolean admit) throws Exception {
    RedisClient redis = RedisClient.create(uri);
    BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    int sold = 0;
    try (RedisLockClient locks = RedisLockClient.create(uri);
        StatefulRedisConnection<String, String> connection = redis.connect()) {
      Inventory inventory = new Inventory(connection.sync());
      DistributedLock lock = locks.lock(LOCK);
      for (int i = 0; i < items; i++) {
        try (Lease lease = lock.acquire(Duration.ofSeconds(30))) {
          int stock = read(inventory, lease.fencingToken(), admit);
          if (i == 0) {
            System.out.println("READ token=" + lease.fencingToken() + " stock=" + stock);
            System.out.flush();
            awaitGo(stdin);
          }
          if (write(inventory, lease.fencingToken(), stock - 1, admit)) {
            inventory.recordSale();
            sold++;
            System.out.println("SOLD token=" + lease.fencingToken() + " stock=" + (stock - 1));
          }
        }
      }
    } finally {
      redis.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }
    System.out.println("RESULT sold=" + sold);
  }
}
