package io.locksmith.redis;

import io.locksmith.Lease;

/**
 * Run in a child JVM whose class path has an unsupported Lettuce ({@link UnsupportedLettuceTest}): builds a
 * client on the given server, takes and releases a lock, and prints what happened on one line.
 */
final class UnsupportedLettuceMain {
  private UnsupportedLettuceMain() {}

  public static void main(String[] args) {
    try (RedisLockClient client = RedisLockClient.create(args[0])) {
      Lease lease = client.lock("unsupported-lettuce").tryAcquire().orElseThrow();
      lease.release();
      System.out.println("OUTCOME built, locked and released");
    } catch (Throwable t) { // NoSuchMethodError included: that is what the check must prevent
      System.out.println("OUTCOME " + t.getClass().getName() + ": " + t.getMessage());
    }
  }
}
