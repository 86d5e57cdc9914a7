package io.locksmith.check;

import io.locksmith.LockClient;
import io.locksmith.redis.RedisLockClient;
import io.locksmith.redis.RedlockClient;
import io.locksmith.zookeeper.ZooKeeperLockClient;
import java.time.Duration;
import java.util.Arrays;

/**
 * Client specs: the one string a child JVM needs to build its lock client. {@code redlock:uri,uri,...}
 * is a Redlock client; {@code zk-session:<ms>:zookeeper://…} a ZooKeeper client with that session
 * timeout; anything else is a {@code RedisLockClient} URI ({@code redis://}, {@code redis-sentinel://},
 * and whatever else it learns to accept).
 */
final class Clients {
  static final String REDLOCK = "redlock:";
  static final String ZOOKEEPER = "zk-session:";

  private Clients() {}

  static String redlock(Iterable<String> uris) {
    return REDLOCK + String.join(",", uris);
  }

  static String zookeeper(String uri, long sessionMillis) {
    return ZOOKEEPER + sessionMillis + ":" + uri;
  }

  static LockClient create(String spec) {
    if (spec.startsWith(ZOOKEEPER)) {
      String rest = spec.substring(ZOOKEEPER.length());
      int colon = rest.indexOf(':');
      return ZooKeeperLockClient.builder().uri(rest.substring(colon + 1))
          .sessionTimeout(Duration.ofMillis(Long.parseLong(rest.substring(0, colon))))
          .connectionTimeout(Duration.ofSeconds(1)).build();
    }
    if (spec.startsWith(REDLOCK)) {
      return RedlockClient.builder().nodes(Arrays.asList(spec.substring(REDLOCK.length()).split(","))).build();
    }
    return RedisLockClient.builder().uri(spec).commandTimeout(Duration.ofSeconds(1)).build();
  }
}
