package io.locksmith.redis;

import io.locksmith.Lease;
import io.locksmith.LockOptions;
import java.time.Duration;

/**
 * A child JVM for {@link RedisSemaphoreTest}: takes one watched permit, prints {@code HELD <token>} and
 * keeps it (renewing) until it is killed or its stdin closes. Arguments: Redis URI, semaphore name,
 * permit count, lease in ms.
 */
final class SemaphoreHolderProcess {
  private SemaphoreHolderProcess() {}

  public static void main(String[] args) throws Exception {
    try (RedisLockClient client = RedisLockClient.create(args[0])) {
      Lease lease = client.semaphore(args[1], Integer.parseInt(args[2]),
          LockOptions.watched(Duration.ofMillis(Long.parseLong(args[3])))).acquire(Duration.ofSeconds(30));
      System.out.println("HELD " + lease.fencingToken());
      System.out.flush();
      while (System.in.read() >= 0) {
        // hold until the parent closes our stdin (or kills us, which is the point)
      }
    }
  }
}
