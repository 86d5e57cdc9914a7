package io.locksmith.redis;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisNoScriptException;
import io.locksmith.BackendUnavailableException;
import io.locksmith.LockException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/** The one place where Lettuce's exceptions become Locksmith's. */
final class RedisExceptions {
  private RedisExceptions() {}

  static Throwable unwrap(Throwable t) {
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  static boolean isNoScript(Throwable t) {
    Throwable u = unwrap(t);
    return u instanceof RedisNoScriptException
        || (u instanceof RedisCommandExecutionException && String.valueOf(u.getMessage()).startsWith("NOSCRIPT"));
  }

  /**
   * A timeout or a {@code READONLY} reply: what a client sees when its connection still points at a
   * master that hangs or has been demoted.
   */
  static boolean mayBeStaleMaster(Throwable t) {
    Throwable u = unwrap(t);
    return u instanceof RedisCommandTimeoutException
        || (u instanceof RedisCommandExecutionException && String.valueOf(u.getMessage()).startsWith("READONLY"));
  }

  /**
   * A {@code TRYAGAIN} reply: a multi-key command on a Cluster slot that is being migrated found only
   * some of its keys; it was not executed and may be sent again.
   */
  static boolean isTryAgain(Throwable t) {
    Throwable u = unwrap(t);
    return u instanceof RedisCommandExecutionException && String.valueOf(u.getMessage()).startsWith("TRYAGAIN");
  }

  /** Error replies that mean "not now" (loading, busy script, demoted master, failover, cluster down). */
  private static final java.util.List<String> TRANSIENT =
      java.util.List.of("LOADING", "BUSY", "READONLY", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN");

  /**
   * A transient error reply (see {@link #TRANSIENT}) is treated like an unreachable server. Any other
   * error reply from the server (wrong password, out of memory, script error) is a
   * {@link LockException}; anything else — timeout, refused or dropped connection, rejected while
   * disconnected — means the server could not be reached: {@link BackendUnavailableException}.
   */
  static RuntimeException translate(Throwable t, String what) {
    Throwable u = unwrap(t);
    if (u instanceof LockException le) {
      return le;
    }
    for (Throwable c = u; c != null; c = c.getCause()) {
      if (c instanceof RedisCommandExecutionException) { // e.g. WRONGPASS wrapped in a connect failure
        String reply = String.valueOf(c.getMessage());
        if (TRANSIENT.stream().anyMatch(reply::startsWith)) {
          return new BackendUnavailableException("Redis cannot serve now, could not " + what + ": " + reply, u);
        }
        return new LockException("Redis refused to " + what + ": " + reply, u);
      }
    }
    return new BackendUnavailableException("Redis unavailable, could not " + what + ": " + u, u);
  }
}
