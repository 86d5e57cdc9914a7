package io.locksmith.bench;

import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The floor: {@code SET key token NX PX} to acquire, an owner-checked delete script to release, two
 * commands per cycle on one multiplexed Lettuce connection. No renewal, no fencing, no re-entrancy;
 * a busy lock is polled every 200 µs (no notification), which favours it under contention on a local
 * server at the price of load a real deployment would not accept.
 */
final class RawLettuceImpl implements LockImpl {
  private static final String RELEASE =
      "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";
  private final RedisClient client;
  private final StatefulRedisConnection<String, String> connection;
  private final RedisCommands<String, String> sync;
  private final String releaseSha;
  private final String prefix = UUID.randomUUID().toString().substring(0, 8) + ":";
  private final AtomicLong tokens = new AtomicLong();

  RawLettuceImpl(String uri) {
    client = RedisClient.create(uri);
    connection = client.connect();
    sync = connection.sync();
    releaseSha = sync.scriptLoad(RELEASE);
  }

  @Override
  public String name() {
    return "raw";
  }

  @Override
  public Held acquire(String name, long waitNanos) {
    String key = "raw:lock:" + name;
    String token = prefix + tokens.incrementAndGet();
    SetArgs args = SetArgs.Builder.nx().px(30_000);
    long deadline = System.nanoTime() + waitNanos;
    while (sync.set(key, token, args) == null) {
      if (System.nanoTime() - deadline >= 0) {
        return null;
      }
      LockSupport.parkNanos(200_000);
    }
    return () -> sync.evalsha(releaseSha, ScriptOutputType.INTEGER, new String[] {key}, token);
  }

  @Override
  public void close() {
    connection.close();
    client.shutdown();
  }
}
