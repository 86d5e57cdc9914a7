package io.locksmith.redis;

import io.locksmith.DistributedLock;
import java.time.Duration;

/**
 * A child process for {@link RedisFairLockTest}: connects, queues on a fair lock held by someone else,
 * prints {@value #QUEUED} once its place is on the server, and waits until it is killed. It takes the
 * lock if it ever gets it, and then holds it, so a test that expects it dead must kill it first.
 *
 * <p>Arguments: Redis URI, lock name, place timeout in ms.
 */
final class QueuedFairWaiter {
  static final String QUEUED = "QUEUED";

  private QueuedFairWaiter() {}

  public static void main(String[] args) throws Exception {
    RedisLockClient client = RedisLockClient.builder().uri(args[0])
        .fairQueueTimeout(Duration.ofMillis(Long.parseLong(args[2]))).build();
    DistributedLock lock = client.fairLock(args[1]);
    lock.acquireAsync(Duration.ofMinutes(10));
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (lock.inspect().map(i -> i.waiters()).orElse(0) < 1) {
      if (System.nanoTime() > deadline) {
        System.out.println("NOT QUEUED");
        System.exit(2);
      }
      Thread.sleep(5); // polling for the test's precondition, not synchronising with a peer
    }
    System.out.println(QUEUED);
    System.out.flush();
    Thread.sleep(Long.MAX_VALUE); // until killed
  }
}
