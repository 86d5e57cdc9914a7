package io.locksmith.spring;

import io.locksmith.BackendConfigurationException;
import io.locksmith.ClientOptions;
import io.locksmith.LockClient;
import io.locksmith.redis.RedisLockClient;
import io.locksmith.redis.RedlockClient;
import io.locksmith.redis.ReplicaAckPolicy;
import java.util.Locale;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/** Redis and Redlock clients from properties; loaded only when locksmith-redis is present. */
final class RedisClients {

  private RedisClients() {}

  static LockClient redis(LockClientFactory f, String clientName, String prefix, LockClientProperties p, ClientOptions options) {
    LockClientProperties.Redis r = p.getRedis();
    if (!LockClientFactory.hasText(r.getUri())) {
      throw new InvalidConfigurationPropertyValueException(prefix + ".redis.uri", r.getUri(),
          "the redis backend needs a URI (redis://host:port, rediss://, redis-sentinel://, redis-cluster://)");
    }
    RedisLockClient.Builder b = RedisLockClient.builder().uri(r.getUri()).options(options)
        .commandTimeout(r.getCommandTimeout()).waiterRecheck(r.getWaiterRecheck());
    if (r.getReplicaAckReplicas() > 0) {
      ReplicaAckPolicy policy;
      try {
        policy = ReplicaAckPolicy.valueOf(r.getReplicaAckPolicy().toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException | NullPointerException e) {
        throw new InvalidConfigurationPropertyValueException(prefix + ".redis.replica-ack-policy", r.getReplicaAckPolicy(),
            "must be one of REQUIRE, REPORT");
      }
      b.replicaAcknowledgement(r.getReplicaAckReplicas(), r.getReplicaAckTimeout(), policy);
    } else if (r.getReplicaAckReplicas() < 0) {
      throw new InvalidConfigurationPropertyValueException(prefix + ".redis.replica-ack-replicas", r.getReplicaAckReplicas(),
          "must be 0 (off) or more");
    }
    f.customize(clientName, b);
    try {
      return b.build();
    } catch (IllegalArgumentException e) {
      throw new InvalidConfigurationPropertyValueException(prefix + ".redis." + propertyOf(e.getMessage()),
          valueOf(r, propertyOf(e.getMessage())), Redaction.redact(e.getMessage()));
    } catch (BackendConfigurationException e) {
      // the server refused this configuration (password, TLS, eviction policy): the URI carries all of it
      throw new InvalidConfigurationPropertyValueException(prefix + ".redis.uri", redacted(r.getUri()),
          Redaction.redact(e.getMessage()));
    }
  }

  static LockClient redlock(LockClientFactory f, String clientName, String prefix, LockClientProperties p, ClientOptions options) {
    LockClientProperties.Redlock r = p.getRedlock();
    RedlockClient.Builder b = RedlockClient.builder().nodes(r.getNodes()).nodeTimeout(r.getNodeTimeout()).options(options);
    f.customize(clientName, b);
    try {
      return b.build();
    } catch (IllegalArgumentException e) {
      String property = e.getMessage() != null && e.getMessage().toLowerCase(Locale.ROOT).contains("timeout") ? "node-timeout" : "nodes";
      // node URIs may carry passwords: neither the value nor the builder's message may show them
      throw new InvalidConfigurationPropertyValueException(prefix + ".redlock." + property,
          property.equals("nodes") ? Redaction.redact(r.getNodes()) : r.getNodeTimeout(), Redaction.redact(e.getMessage()));
    }
  }

  /** Which Redis property an IllegalArgumentException from the builder is about (by its message). */
  private static String propertyOf(String message) {
    String m = message == null ? "" : message.toLowerCase(Locale.ROOT);
    if (m.contains("commandtimeout") || m.contains("command timeout")) {
      return "command-timeout";
    }
    if (m.contains("recheck")) {
      return "waiter-recheck";
    }
    if (m.contains("replica") || m.contains("wait")) {
      return "replica-ack-timeout";
    }
    return "uri";
  }

  private static Object valueOf(LockClientProperties.Redis r, String property) {
    switch (property) {
      case "command-timeout":
        return r.getCommandTimeout();
      case "waiter-recheck":
        return r.getWaiterRecheck();
      case "replica-ack-timeout":
        return r.getReplicaAckTimeout();
      default:
        return redacted(r.getUri());
    }
  }

  /** The URI without its user-info part, which may hold a password. */
  static String redacted(String uri) {
    if (uri == null) {
      return null;
    }
    int scheme = uri.indexOf("://");
    int at = uri.lastIndexOf('@');
    return scheme >= 0 && at > scheme ? uri.substring(0, scheme + 3) + "***@" + uri.substring(at + 1) : Redaction.redact(uri);
  }
}
