package io.locksmith.bench;

import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The minimal fenced lock of issue 27, the floor for a lock that hands out fencing tokens: acquire is one
 * script, {@code SET key owner NX PX} and, only if that set the key, {@code INCR} of the lock's counter key,
 * returning the new token (0 when the lock is busy); release is one owner-checked delete script. Per cycle
 * that is 2 scripts + SET + INCR + GET + DEL = 6 server calls. No renewal, waiters, notification or
 * re-entrancy: a busy lock is polled every 200 µs, as {@link RawLettuceImpl} does. Both keys share a hash
 * tag. Thread-safe: one multiplexed Lettuce connection.
 */
final class FencedMinimalImpl implements LockImpl {
  private static final String ACQUIRE = "if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then "
      + "return redis.call('incr', KEYS[2]) end return 0";
  private static final String RELEASE =
      "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";
  private static final String LEASE_MILLIS = "30000";
  private final RedisClient client;
  private final StatefulRedisConnection<String, String> connection;
  private final RedisCommands<String, String> sync;
  private final String acquireSha;
  private final String releaseSha;
  private final String prefix = UUID.randomUUID().toString().substring(0, 8) + ":";
  private final AtomicLong owners = new AtomicLong();

  FencedMinimalImpl(String uri) {
    client = RedisClient.create(uri);
    connection = client.connect();
    sync = connection.sync();
    acquireSha = sync.scriptLoad(ACQUIRE);
    releaseSha = sync.scriptLoad(RELEASE);
  }

  @Override
  public String name() {
    return "fenced-minimal";
  }

  @Override
  public Held acquire(String name, long waitNanos) {
    String[] keys = {"fm:{" + name + "}:lock", "fm:{" + name + "}:fence"};
    String owner = prefix + owners.incrementAndGet();
    long deadline = System.nanoTime() + waitNanos;
    while (true) {
      Long token = sync.evalsha(acquireSha, ScriptOutputType.INTEGER, keys, owner, LEASE_MILLIS);
      if (token != null && token > 0) {
        break; // the token would guard the protected resource's writes
      }
      if (System.nanoTime() - deadline >= 0) {
        return null;
      }
      LockSupport.parkNanos(200_000);
    }
    return () -> sync.evalsha(releaseSha, ScriptOutputType.INTEGER, new String[] {keys[0]}, owner);
  }

  @Override
  public void close() {
    connection.close();
    client.shutdown();
  }
}
