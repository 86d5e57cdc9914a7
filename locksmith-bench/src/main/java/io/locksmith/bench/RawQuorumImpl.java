package io.locksmith.bench;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The floor of any Redlock on this machine: {@code SET NX PX} to every node at once, done when a
 * majority said OK; release the same way. No validity check, token, retry or clean-up: it only tells
 * what five parallel round trips cost here, so that a Redlock's overhead can be told from the
 * machine's.
 *
 * <p>Sequential ({@code raw-quorum-sequential}), it asks one node after another until a majority said
 * OK (and releases on all five at once, as the parallel one does): the control that shows what the
 * benchmark reports for a quorum that is not asked in parallel.
 */
final class RawQuorumImpl implements LockImpl {
  private static final String RELEASE =
      "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";
  private final ClientResources resources = DefaultClientResources.builder().ioThreadPoolSize(2).build();
  private final List<RedisClient> clients = new ArrayList<>();
  private final List<StatefulRedisConnection<String, String>> connections = new ArrayList<>();
  private final List<RedisAsyncCommands<String, String>> nodes = new ArrayList<>();
  private final String releaseSha;
  private final String prefix = UUID.randomUUID().toString().substring(0, 8) + ":";
  private final AtomicLong tokens = new AtomicLong();
  private final boolean sequential;

  RawQuorumImpl(List<String> uris, boolean sequential) {
    this.sequential = sequential;
    String sha = null;
    for (String uri : uris) {
      RedisClient client = RedisClient.create(resources, uri);
      StatefulRedisConnection<String, String> connection = client.connect();
      clients.add(client);
      connections.add(connection);
      nodes.add(connection.async());
      sha = connection.sync().scriptLoad(RELEASE);
    }
    releaseSha = sha;
  }

  @Override
  public String name() {
    return sequential ? "raw-quorum-sequential" : "raw-quorum";
  }

  @Override
  public Held acquire(String name, long waitNanos) throws Exception {
    String key = "rawq:lock:" + name;
    String token = prefix + tokens.incrementAndGet();
    SetArgs args = SetArgs.Builder.nx().px(30_000);
    boolean granted;
    if (sequential) {
      int ok = 0;
      for (int i = 0; i < nodes.size() && ok < nodes.size() / 2 + 1; i++) {
        if ("OK".equals(nodes.get(i).set(key, token, args).get(5, TimeUnit.SECONDS))) {
          ok++;
        }
      }
      granted = ok >= nodes.size() / 2 + 1;
    } else {
      List<RedisFuture<String>> replies = new ArrayList<>();
      for (RedisAsyncCommands<String, String> node : nodes) {
        replies.add(node.set(key, token, args));
      }
      granted = majority(replies, "OK"::equals);
    }
    if (!granted) {
      throw new IllegalStateException("raw-quorum: no majority on an uncontended name");
    }
    return () -> {
      List<RedisFuture<Long>> released = new ArrayList<>();
      for (RedisAsyncCommands<String, String> node : nodes) {
        released.add(node.evalsha(releaseSha, ScriptOutputType.INTEGER, new String[] {key}, token));
      }
      majority(released, n -> n != null && n == 1L);
    };
  }

  /** Waits until a majority of replies satisfy {@code ok}, or until that cannot happen any more. */
  private static <T> boolean majority(List<RedisFuture<T>> replies, java.util.function.Predicate<T> ok)
      throws Exception {
    int quorum = replies.size() / 2 + 1;
    AtomicInteger yes = new AtomicInteger();
    AtomicInteger no = new AtomicInteger();
    CompletableFuture<Boolean> done = new CompletableFuture<>();
    for (RedisFuture<T> r : replies) {
      r.whenComplete((v, f) -> {
        if (f == null && ok.test(v)) {
          if (yes.incrementAndGet() >= quorum) {
            done.complete(true);
          }
        } else if (no.incrementAndGet() > replies.size() - quorum) {
          done.complete(false);
        }
      });
    }
    return done.get(5, TimeUnit.SECONDS);
  }

  @Override
  public void close() {
    connections.forEach(StatefulRedisConnection::close);
    clients.forEach(RedisClient::shutdown);
    resources.shutdown();
  }
}
