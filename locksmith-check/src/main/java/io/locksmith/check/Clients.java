package io.locksmith.check;

import io.locksmith.ClientOptions;
import io.locksmith.LockClient;
import io.locksmith.redis.RedisLockClient;
import io.locksmith.redis.RedlockClient;
import io.locksmith.zookeeper.ZooKeeperLockClient;
import java.time.Duration;
import java.util.Arrays;

/**
 * Client specs: the one string a child JVM needs to build its lock client. {@code redlock:uri,uri,...}
 * is a Redlock client; {@code jdbc:…} a {@code JdbcLockClient} over a small pool; {@code
 * zk-session:<ms>:zookeeper://…} a ZooKeeper client with that session timeout; anything else is a {@code
 * RedisLockClient} URI ({@code redis://}, {@code redis-sentinel://}, and whatever else it learns to
 * accept). A ZooKeeper spec may name the servers' tick after the session: {@code
 * zk-session:<ms>:<tick ms>:zookeeper://…}, declared to the client ({@code serverTickTime}) for its loss
 * bound.
 */
final class Clients {
  static final String REDLOCK = "redlock:";
  static final String ZOOKEEPER = "zk-session:";
  /** The command timeout of the JDBC clients in the child JVMs. */
  static final Duration JDBC_COMMAND_TIMEOUT = Duration.ofSeconds(1);

  private Clients() {}

  /** A pool for a client JVM: borrowing a connection never waits longer than the command timeout. */
  static javax.sql.DataSource dataSource(String url, int size) {
    com.zaxxer.hikari.HikariConfig config = new com.zaxxer.hikari.HikariConfig();
    config.setJdbcUrl(url);
    config.setMaximumPoolSize(size);
    config.setMinimumIdle(0);
    config.setConnectionTimeout(1_000);
    config.setValidationTimeout(500);
    config.setInitializationFailTimeout(-1);
    return new com.zaxxer.hikari.HikariDataSource(config);
  }

  static String redlock(Iterable<String> uris) {
    return REDLOCK + String.join(",", uris);
  }

  static String zookeeper(String uri, long sessionMillis) {
    return ZOOKEEPER + sessionMillis + ":" + uri;
  }

  /** As {@link #zookeeper(String, long)}, declaring the servers' tick. */
  static String zookeeper(String uri, long sessionMillis, long tickMillis) {
    return ZOOKEEPER + sessionMillis + ":" + tickMillis + ":" + uri;
  }

  /**
   * @param schedulingAllowance the clients' scheduling allowance, or null for their default
   */
  static LockClient create(String spec, Duration schedulingAllowance) {
    ClientOptions options = options(schedulingAllowance);
    if (spec.startsWith("jdbc:")) {
      return io.locksmith.jdbc.JdbcLockClient.builder().dataSource(dataSource(spec, 8))
          .commandTimeout(JDBC_COMMAND_TIMEOUT).options(options).build();
    }
    if (spec.startsWith(ZOOKEEPER)) {
      String rest = spec.substring(ZOOKEEPER.length());
      int colon = rest.indexOf(':');
      ZooKeeperLockClient.Builder b = ZooKeeperLockClient.builder()
          .sessionTimeout(Duration.ofMillis(Long.parseLong(rest.substring(0, colon))))
          .connectionTimeout(Duration.ofSeconds(1)).options(options);
      rest = rest.substring(colon + 1);
      colon = rest.indexOf(':');
      if (colon > 0 && rest.substring(0, colon).chars().allMatch(Character::isDigit)) {
        b.serverTickTime(Duration.ofMillis(Long.parseLong(rest.substring(0, colon))));
        rest = rest.substring(colon + 1);
      }
      return b.uri(rest).build();
    }
    if (spec.startsWith(REDLOCK)) {
      return RedlockClient.builder().nodes(Arrays.asList(spec.substring(REDLOCK.length()).split(",")))
          .options(options).build();
    }
    return RedisLockClient.builder().uri(spec).commandTimeout(Duration.ofSeconds(1)).options(options).build();
  }

  /** @return the client options of a check client: the defaults, with the scheduling allowance if given */
  static ClientOptions options(Duration schedulingAllowance) {
    return schedulingAllowance == null ? ClientOptions.defaults()
        : ClientOptions.builder().schedulingAllowance(schedulingAllowance).build();
  }
}
