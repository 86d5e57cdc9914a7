package io.locksmith.cli;

import io.locksmith.ClientOptions;
import io.locksmith.LockClient;
import io.locksmith.LockException;
import io.locksmith.LockKind;
import io.locksmith.LockScan;
import io.locksmith.LockScan.End;
import io.locksmith.LockScan.Found;
import io.locksmith.jdbc.JdbcLockClient;
import io.locksmith.jdbc.JdbcLockMode;
import io.locksmith.jdbc.JdbcLockScan;
import io.locksmith.redis.RedisLockClient;
import io.locksmith.redis.RedisLockScan;
import io.locksmith.redis.RedlockClient;
import io.locksmith.zookeeper.ZooKeeperLockClient;
import io.locksmith.zookeeper.ZooKeeperLockScan;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * The servers {@code inspect}, {@code list} and {@code unlock} reach, and what a walk of their keys found:
 * split from {@link OperatorCommand} so that the commands' answers read apart from the connecting and walking.
 * Not thread-safe: one command uses one target.
 */
final class OperatorTargets {
  private OperatorTargets() {}

  /**
   * What a walk of every server of a target found.
   *
   * @param allWalked false if a Redlock node could not be reached (see {@code notes})
   */
  record Scan(List<Found> locks, long lockKeys, End end, boolean allWalked, List<String> notes) {}

  /** The servers a command reaches: one Redis deployment, or the nodes of a Redlock. */
  static final class Target implements AutoCloseable {
    final LockClient client;
    final String namespace;
    final String description;
    /** JDBC: the {@code --mode} given (null: none), and the pinned modes a command looks at. */
    String mode;
    List<JdbcLockMode> pinned = List.of();
    private final ClientOptions options;
    /** A Redlock's node URIs; null for one Redis deployment. */
    private final List<String> nodes;

    private Target(LockClient client, ClientOptions options, String description, List<String> nodes) {
      this.client = client;
      this.options = options;
      this.namespace = options.namespace();
      this.description = description;
      this.nodes = nodes;
    }

    static Target redis(String uri, ClientOptions options) {
      RedisLockClient client = RedisLockClient.builder().uri(uri).options(options).build();
      return new Target(client, options, client.serverDescription(), null);
    }

    /** The JDBC backend's lease-mode locks in {@code table} of the database at {@code url}. */
    static Target jdbc(String url, String user, String table, ClientOptions options) {
      if (!url.startsWith("jdbc:")) {
        throw new IllegalArgumentException("--jdbc-url must start with jdbc:, was '" + UrlDataSource.redact(url) + "'");
      }
      JdbcLockClient client = JdbcLockClient.builder()
          .dataSource(new UrlDataSource(url, user, System.getenv("LOCKSMITH_JDBC_PASSWORD")))
          .table(table != null ? table : JdbcLockClient.DEFAULT_TABLE).options(options).build();
      return new Target(client, options, UrlDataSource.redact(url) + " (table " + client.table() + ")", null);
    }

    static Target zookeeper(String uri, ClientOptions options) {
      ZooKeeperLockClient client = ZooKeeperLockClient.builder().uri(uri).options(options).build();
      return new Target(client, options, client.serverDescription(), null);
    }

    static Target redlock(List<String> nodes, ClientOptions options) {
      RedlockClient client = RedlockClient.builder().nodes(nodes).options(options).build();
      return new Target(client, options, "the Redlock of " + client.nodes(), nodes);
    }

    boolean isRedlock() {
      return nodes != null;
    }

    /** The kinds this backend offers, in {@link OperatorCommand#KINDS} order. */
    List<String> kinds() {
      List<String> kinds = new ArrayList<>();
      for (String k : OperatorCommand.KINDS) {
        LockKind lk = k.equals("fair") ? LockKind.FAIR : k.equals("read-write") ? LockKind.READ_WRITE
            : k.equals("semaphore") ? LockKind.SEMAPHORE : LockKind.EXCLUSIVE;
        if (client.capabilities().supports(lk)) {
          kinds.add(k);
        }
      }
      return kinds;
    }

    /**
     * Walks the keys of every server: the deployment, or each Redlock node through a client of its own (a
     * node that cannot be reached is noted and skipped, as a Redlock tolerates a minority down).
     *
     * @param anyKey stop at the first Locksmith key instead of collecting up to {@code limit} locks
     */
    Scan scan(int limit, Duration budget, boolean anyKey) {
      if (client instanceof JdbcLockClient jdbc) { // one query over the tables instead of a key walk
        LockScan.Result r = anyKey ? new LockScan.Result(List.of(), jdbc.namespaceRows(), End.FINISHED)
            : JdbcLockScan.locks(jdbc, limit);
        return new Scan(r.locks(), r.traces(), r.end(), true, List.of());
      }
      if (client instanceof ZooKeeperLockClient zk) { // lock parents instead of keys
        LockScan.Result r = anyKey ? ZooKeeperLockScan.anyKey(zk, budget)
            : ZooKeeperLockScan.locks(zk, limit, budget);
        return new Scan(r.locks(), r.traces(), r.end(), true, List.of());
      }
      if (nodes == null) {
        LockScan.Result r = anyKey ? RedisLockScan.anyKey((RedisLockClient) client, budget)
            : RedisLockScan.locks((RedisLockClient) client, limit, budget);
        return new Scan(r.locks(), r.traces(), r.end(), true, List.of());
      }
      long deadline = System.nanoTime() + budget.toNanos();
      TreeSet<Found> found = new TreeSet<>((a, b) -> a.kind() != b.kind() ? a.kind().compareTo(b.kind())
          : a.name().compareTo(b.name()));
      long lockKeys = 0;
      End end = End.FINISHED;
      List<String> notes = new ArrayList<>();
      for (String node : nodes) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          end = End.OUT_OF_TIME;
          break;
        }
        try (RedisLockClient one = RedisLockClient.builder().uri(node).options(options).build()) {
          LockScan.Result r = anyKey ? RedisLockScan.anyKey(one, Duration.ofNanos(left))
              : RedisLockScan.locks(one, limit, Duration.ofNanos(left));
          found.addAll(r.locks());
          lockKeys += r.traces();
          if (r.end().compareTo(end) > 0) {
            end = r.end();
          }
        } catch (LockException e) {
          notes.add("(node " + node.replaceAll("//.*@", "//***@") + " was not walked: " + e.getMessage() + ")");
        }
        if (anyKey && lockKeys > 0) {
          return new Scan(List.of(), lockKeys, End.LIMIT_REACHED, notes.isEmpty(), notes);
        }
      }
      List<Found> locks = new ArrayList<>(found);
      if (locks.size() > limit && !anyKey) {
        locks = locks.subList(0, limit);
        end = End.LIMIT_REACHED;
      }
      return new Scan(locks, lockKeys, end, notes.isEmpty(), notes);
    }

    @Override
    public void close() {
      client.close();
    }
  }
}
