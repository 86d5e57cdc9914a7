package io.locksmith.check;

import io.locksmith.BackendUnavailableException;
import io.locksmith.LockClient;
import io.locksmith.LockOptions;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Entry point of a client JVM started by a check run; internal, not for direct use (its protocol may
 * change without notice). Runs worker threads against the lock backend and talks to the harness over
 * its standard streams, one line per message: events and register requests on stdout, replies and
 * commands on stdin. Logging goes to stderr.
 *
 * <p>The process exits at once when its stdin closes, so a child never outlives its harness; a reply
 * that does not arrive within 60 s ends the worker that waited for it.
 */
public final class ChildMain {
  static final Duration REPLY_TIMEOUT = Duration.ofSeconds(60);
  static final Duration CONNECT_PATIENCE = Duration.ofSeconds(20);

  private ChildMain() {}

  /**
   * @param args {@code spec prefix threads lock,lock,... leaseMillis watched(true|false) waitMillis
   *     allowanceNanos|default kind}, kind a {@code LockKind} name
   */
  public static void main(String[] args) {
    if (args.length != 9) {
      System.err.println("usage: ChildMain spec prefix threads locks leaseMillis watched waitMillis allowance kind");
      System.exit(2);
    }
    PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
    System.setOut(System.err); // nobody else may write protocol lines
    PipeChannel channel = new PipeChannel(out);
    Thread reader = new Thread(channel::readLoop, "check-child-stdin");
    reader.setDaemon(true);
    reader.start();
    int threads = Integer.parseInt(args[2]);
    List<String> locks = Arrays.asList(args[3].split(","));
    LockOptions options = Boolean.parseBoolean(args[5]) ? LockOptions.watched(Duration.ofMillis(Long.parseLong(args[4])))
        : LockOptions.fixed(Duration.ofMillis(Long.parseLong(args[4])));
    Duration wait = Duration.ofMillis(Long.parseLong(args[6]));
    LockClient client;
    try {
      client = connect(args[0], args[7].equals("default") ? null : Duration.ofNanos(Long.parseLong(args[7])));
    } catch (RuntimeException e) {
      channel.send("FATAL " + e.toString().replace('\n', ' '));
      System.exit(1);
      return;
    }
    try (client) {
      channel.send("READY");
      channel.go.await();
      List<Thread> workers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        io.locksmith.LockKind kind = io.locksmith.LockKind.valueOf(args[8]);
        Worker w = new Worker(args[1] + "-t" + t, client, options, locks, wait, channel, () -> channel.stopped, kind,
            Worker.reads(kind, t));
        Thread thread = new Thread(w, "check-worker-" + t);
        workers.add(thread);
        thread.start();
      }
      for (Thread t : workers) {
        t.join();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    channel.send("DONE");
    System.exit(0);
  }

  /**
   * Builds the client, retrying an unavailable backend for up to {@link #CONNECT_PATIENCE}: a cold JVM
   * on a loaded machine can miss Redlock's 250 ms node timeout on its very first commands.
   */
  static LockClient connect(String spec, Duration schedulingAllowance) {
    long deadline = System.nanoTime() + CONNECT_PATIENCE.toNanos();
    while (true) {
      try {
        return Clients.create(spec, schedulingAllowance);
      } catch (BackendUnavailableException e) {
        if (System.nanoTime() - deadline > 0) {
          throw e;
        }
        System.err.println("check child: backend not reachable yet, retrying: " + e.getMessage());
      }
    }
  }

  /** The child's side of the pipe protocol. */
  static final class PipeChannel implements Channel {
    private final PrintStream out;
    private final Map<Long, CompletableFuture<String[]>> pending = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong();
    final CountDownLatch go = new CountDownLatch(1);
    volatile boolean stopped;

    PipeChannel(PrintStream out) {
      this.out = out;
    }

    void send(String line) {
      synchronized (out) {
        out.println(line);
        out.flush();
      }
    }

    void readLoop() {
      try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
        for (String line; (line = in.readLine()) != null; ) {
          String[] f = line.split(" ");
          switch (f[0]) {
            case "GO" -> go.countDown();
            case "STOP" -> {
              stopped = true;
              go.countDown();
            }
            case "A" -> {
              CompletableFuture<String[]> reply = pending.remove(Long.parseLong(f[1]));
              if (reply != null) {
                reply.complete(f);
              }
            }
            default -> System.err.println("check child: unknown command " + line);
          }
        }
      } catch (Exception e) {
        System.err.println("check child: stdin failed: " + e);
      }
      Runtime.getRuntime().halt(3); // the harness is gone: so are we
    }

    @Override
    public void event(Event e) {
      send("E " + e.nanos() + " " + e.client() + " " + e.op() + " " + e.type() + " " + e.lock() + " " + e.token()
          + " " + e.detail());
    }

    private String[] request(String body) {
      long id = ids.incrementAndGet();
      CompletableFuture<String[]> reply = new CompletableFuture<>();
      pending.put(id, reply);
      send("Q " + id + " " + body);
      try {
        return reply.get(REPLY_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new ChannelClosedException("interrupted");
      } catch (ExecutionException | TimeoutException e) {
        throw new ChannelClosedException("no reply from the harness: " + e);
      } finally {
        pending.remove(id);
      }
    }

    @Override
    public Register.ReadResult read(String client, String lock, long token) {
      String[] f = request("R " + client + " " + lock + " " + token);
      return new Register.ReadResult(f[2].equals("1"), Long.parseLong(f[3]), Long.parseLong(f[4]));
    }

    @Override
    public long peek(String client, String lock, boolean again, long firstVersion) {
      String[] f = request("P " + client + " " + lock + " " + (again ? 1 : 0) + " " + firstVersion);
      return Long.parseLong(f[2]);
    }

    @Override
    public boolean write(String client, String lock, long token, long readFrom) {
      String[] f = request("W " + client + " " + lock + " " + token + " " + readFrom);
      return f[2].equals("1");
    }
  }
}
