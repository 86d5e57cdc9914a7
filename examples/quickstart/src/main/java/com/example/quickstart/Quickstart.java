package com.example.quickstart;

import io.locksmith.Lease;
import io.locksmith.LockClient;
import io.locksmith.redis.RedisLockClient;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

/**
 * The README's quickstart as a program: the {@code Lock} view, then the lease view with its fencing
 * token guarding writes to a resource. {@code java com.example.quickstart.Quickstart redis://host:6379}.
 */
public final class Quickstart {
  private Quickstart() {}

  /**
   * @param args the Redis URI, default {@code redis://localhost:6379}
   * @throws InterruptedException if interrupted while waiting for a lock
   */
  public static void main(String[] args) throws InterruptedException {
    String uri = args.length > 0 ? args[0] : "redis://localhost:6379";
    try (RedisLockClient locks = RedisLockClient.create(uri)) {
      System.out.println(run(locks));
    }
  }

  /** What one run did. */
  record Report(boolean reportRan, long firstToken, long balance, boolean staleWriteRejected) {}

  static Report run(LockClient locks) throws InterruptedException {
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

    // the lease view: every write to the resource carries the lease's fencing token
    Account account = new Account();
    long firstToken;
    try (Lease lease = locks.lock("account-42").acquire(Duration.ofSeconds(5))) {
      firstToken = lease.fencingToken();
      if (!account.update(100, firstToken)) {
        throw new IllegalStateException("rejected as stale: a newer lock holder has written");
      }
    }
    // the next holder's token is larger; a late write with the first token is refused
    try (Lease next = locks.lock("account-42").acquire(Duration.ofSeconds(5))) {
      account.update(200, next.fencingToken());
    }
    boolean staleWriteRejected = !account.update(300, firstToken);
    return new Report(reportRan, firstToken, account.balance(), staleWriteRejected);
  }

  /**
   * A resource that refuses writes with a token below the largest it has seen, like
   * {@code UPDATE account SET balance = ?, fence = ? WHERE id = ? AND fence <= ?}.
   */
  static final class Account {
    private long balance;
    private long fence;

    synchronized boolean update(long newBalance, long token) {
      if (token < fence) {
        return false;
      }
      fence = token;
      balance = newBalance;
      return true;
    }

    synchronized long balance() {
      return balance;
    }
  }
}
