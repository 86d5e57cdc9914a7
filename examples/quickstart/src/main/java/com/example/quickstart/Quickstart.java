package com.example.quickstart;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.locksmith.ClientOptions;
import io.locksmith.Lease;
import io.locksmith.LockClient;
import io.locksmith.LockOptions;
import io.locksmith.StaleTokenException;
import io.locksmith.redis.RedisFencedValue;
import io.locksmith.redis.RedisLockClient;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

/**
 * The README's quickstart as a program: the {@code Lock} view, then the lease view whose fencing token
 * guards a balance kept in Redis ({@link RedisFencedValue}), including a holder that comes back after a
 * newer holder and is refused. {@code java com.example.quickstart.Quickstart redis://host:6379}.
 */
public final class Quickstart {
  private Quickstart() {}

  /**
   * @param args the Redis URI, default {@code redis://localhost:6379}; the locks and the balance share it
   * @throws InterruptedException if interrupted while waiting for a lock
   */
  public static void main(String[] args) throws InterruptedException {
    String uri = args.length > 0 ? args[0] : "redis://localhost:6379";
    RedisClient data = RedisClient.create(uri);
    try (RedisLockClient locks = configured(uri);
        StatefulRedisConnection<String, String> connection = data.connect()) {
      System.out.println(run(locks, RedisFencedValue.of(connection.sync(), "quickstart:balance:42")));
    } finally {
      data.shutdown();
    }
  }

  /**
   * The README's builder example: every timeout set explicitly, a namespace and a client name.
   *
   * @param uri the Redis URI
   * @return a connected client; the caller closes it
   */
  static RedisLockClient configured(String uri) {
    RedisLockClient locks = RedisLockClient.builder()
        .uri(uri)
        .commandTimeout(Duration.ofSeconds(2))
        .waiterRecheck(Duration.ofSeconds(5))
        .options(ClientOptions.builder()
            .namespace("billing")
            .clientName("billing-7/4711")
            .defaultLockOptions(LockOptions.watched(Duration.ofSeconds(30)))
            .build())
        .build();
    return locks;
  }

  /** What one run did. */
  record Report(boolean reportRan, long firstToken, long secondToken, String balance, boolean staleHolderRefused) {}

  static Report run(LockClient locks, RedisFencedValue balance) throws InterruptedException {
    // the Lock view: owned by this thread, re-entrant
    boolean reportRan = false;
    Lock lock = locks.lock("nightly-report");
    if (lock.tryLock(5, TimeUnit.SECONDS)) {
      try {
        reportRan = true;
      } finally {
        lock.unlock();
      }
    }

    // the lease view: the token goes with every access to the resource, from the first (the read)
    long firstToken;
    try (Lease lease = locks.lock("account-42").acquire(Duration.ofSeconds(5))) {
      firstToken = lease.fencingToken();
      balance.update(firstToken, v -> Long.toString(Long.parseLong(v.orElse("100")) - 10));
    }
    long secondToken;
    try (Lease next = locks.lock("account-42").acquire(Duration.ofSeconds(5))) {
      secondToken = next.fencingToken();
      balance.update(secondToken, v -> Long.toString(Long.parseLong(v.orElse("100")) - 10));
    }
    // the first holder, back late (say after a long GC pause), is refused: a newer token was admitted
    boolean staleHolderRefused;
    try {
      balance.update(firstToken, v -> "0");
      staleHolderRefused = false;
    } catch (StaleTokenException e) {
      staleHolderRefused = true;
    }
    return new Report(reportRan, firstToken, secondToken, balance.read(secondToken).orElse(null), staleHolderRefused);
  }
}
