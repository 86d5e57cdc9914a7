package io.locksmith.redis;

import io.lettuce.core.api.async.RedisServerAsyncCommands;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The start-up check that a node will not evict lock keys (issue 12 item 6). Under a {@code volatile-*}
 * policy Redis may evict any key with a TTL once it reaches {@code maxmemory}, and every lock key has one
 * (the lease); under {@code allkeys-*} any key at all. An evicted lock is free: the next acquirer is
 * granted it while its holder still believes it holds it. Only {@code noeviction} is safe: a full server
 * then refuses writes, so acquisitions fail instead.
 *
 * <p>{@link #check} reads {@code CONFIG GET maxmemory*} (one command, on every Redis version) and logs a WARN
 * naming the risk if the policy is not {@code noeviction}. A server that refuses {@code CONFIG} (an ACL
 * user without it, a renamed command, a managed service) is not an error: the check is skipped with an
 * INFO line. Thread-safe: stateless.
 */
final class EvictionPolicyCheck {
  private static final Logger log = LoggerFactory.getLogger(EvictionPolicyCheck.class);
  /** The only policy under which Redis never evicts a lock's key. */
  static final String SAFE_POLICY = "noeviction";

  private EvictionPolicyCheck() {}

  /**
   * Asks {@code node} for its eviction policy and logs a WARN if it is not {@code noeviction}.
   *
   * @param commands a connection to the node; the command is bounded by its timeout
   * @param node the node's address for the log line, without credentials
   * @return completes, never exceptionally, with the policy, or with null if the server did not say
   */
  static CompletableFuture<String> check(RedisServerAsyncCommands<String, String> commands, String node) {
    CompletableFuture<Map<String, String>> reply;
    try {
      reply = commands.configGet("maxmemory*").toCompletableFuture();
    } catch (RuntimeException e) {
      reply = CompletableFuture.failedFuture(e);
    }
    return reply.handle((config, failure) -> {
      String policy = config == null ? null : config.get("maxmemory-policy");
      if (policy == null) {
        log.info("could not read maxmemory-policy of {} ({}); make sure it is {}: under another policy Redis"
            + " may evict a held lock's key and grant the lock twice", node,
            failure != null ? RedisExceptions.unwrap(failure).toString() : "not in the reply", SAFE_POLICY);
        return null;
      }
      if (!SAFE_POLICY.equalsIgnoreCase(policy)) {
        String maxmemory = config.get("maxmemory");
        String limit = maxmemory == null ? "maxmemory not reported"
            : "0".equals(maxmemory) ? "maxmemory 0: no limit now, but one can be set at any time"
            : "maxmemory " + maxmemory + " bytes";
        log.warn("Redis {} has maxmemory-policy {} ({}): when memory runs out it may evict a held lock's key,"
            + " and that lock can then be granted to a second owner while the first still holds it."
            + " Set maxmemory-policy {} on every node that holds locks (see docs/redis.md, Eviction)",
            node, policy, limit, SAFE_POLICY);
      }
      return policy;
    });
  }
}
