package io.locksmith.check;

import io.locksmith.LockClient;
import io.locksmith.redis.RedisLockClient;
import io.locksmith.redis.RedlockClient;
import java.time.Duration;
import java.util.Arrays;

/**
 * Client specs: the one string a child JVM needs to build its lock client. {@code redlock:uri,uri,...}
 * is a Redlock client; anything else is a {@code RedisLockClient} URI ({@code redis://},
 * {@code redis-sentinel://}, and whatever else it learns to accept).
 */
final class Clients {
  static final String REDLOCK = "redlock:";

  private Clients() {}

  static String redlock(Iterable<String> uris) {
    return REDLOCK + String.join(",", uris);
  }

  static LockClient create(String spec) {
    if (spec.startsWith(REDLOCK)) {
      return RedlockClient.builder().nodes(Arrays.asList(spec.substring(REDLOCK.length()).split(","))).build();
    }
    return RedisLockClient.builder().uri(spec).commandTimeout(Duration.ofSeconds(1)).build();
  }
}
