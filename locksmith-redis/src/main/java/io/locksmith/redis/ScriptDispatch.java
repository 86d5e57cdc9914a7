package io.locksmith.redis;

import io.lettuce.core.RedisFuture;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.resource.ClientResources;
import io.locksmith.BackendUnavailableException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends {@link RedisBackend}'s script calls: by digest ({@code EVALSHA}), once more with the text
 * ({@code EVAL}) when the server lost its script cache ({@code NOSCRIPT}), and on a Cluster again after a
 * {@code TRYAGAIN} (a migrating slot) within the command timeout. Thread-safe; a failure completes the
 * returned future with {@link RedisExceptions#translate}'s exception, never throws to the caller.
 */
final class ScriptDispatch {
  // the backend's logger: these lines were its own before the split
  private static final Logger log = LoggerFactory.getLogger(RedisBackend.class);

  private final RedisBackend backend;
  private final Duration commandTimeout;

  ScriptDispatch(RedisBackend backend, Duration commandTimeout) {
    this.backend = backend;
    this.commandTimeout = commandTimeout;
  }

  /**
   * Sends one script call built by {@code call} (which may read the reply with an output of its own).
   *
   * @param on the connection's commands, or null for the shared command connection (or the one
   *     {@link #releaseOn} routes to)
   */
  <T> CompletableFuture<T> run(RedisClusterAsyncCommands<String, String> on, RedisScript script, String what,
      ScriptCall<T> call) {
    CompletableFuture<T> out = new CompletableFuture<>();
    send(on, script, what, call, out, System.nanoTime() + commandTimeout.toNanos(), 0);
    return out;
  }

  /** One script call on a connection: by digest, or with its text after the server lost it. */
  @FunctionalInterface
  interface ScriptCall<T> {
    RedisFuture<T> send(RedisClusterAsyncCommands<String, String> commands, boolean withText);
  }

  private <T> void send(RedisClusterAsyncCommands<String, String> on, RedisScript script, String what,
      ScriptCall<T> call, CompletableFuture<T> out, long retryDeadline, int attempt) {
    RedisFuture<T> first;
    RedisClusterAsyncCommands<String, String> commands;
    try {
      RedisClusterAsyncCommands<String, String> rerouted = on == null ? routed.get() : null;
      commands = on != null ? on : rerouted != null ? rerouted : backend.commands(what);
      first = call.send(commands, false);
    } catch (RuntimeException e) {
      out.completeExceptionally(RedisExceptions.translate(e, what));
      return;
    }
    first.whenComplete((value, failure) -> {
      if (failure == null) {
        out.complete(value);
      } else if (RedisExceptions.isNoScript(failure)) {
        log.info("Redis lost script {}; reloading it", script);
        RedisFuture<T> retry = call.send(commands, true);
        retry.whenComplete((v, f) -> {
          if (f == null) {
            out.complete(v);
          } else {
            failed(on, script, what, call, out, retryDeadline, attempt, f);
          }
        });
      } else {
        failed(on, script, what, call, out, retryDeadline, attempt, failure);
      }
    });
  }

  private <T> void failed(RedisClusterAsyncCommands<String, String> on, RedisScript script, String what,
      ScriptCall<T> call, CompletableFuture<T> out, long retryDeadline, int attempt, Throwable failure) {
    long delayMillis = Math.min(100, 5L << Math.min(attempt, 5));
    ClientResources r = backend.resources();
    if (backend.isCluster() && !backend.isClosed() && r != null && RedisExceptions.isTryAgain(failure)
        && System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(delayMillis) < retryDeadline) {
      try {
        if (attempt == 0) {
          // each retry has its own command timeout: the whole call must still end at the deadline
          ScheduledFuture<?> guard = r.eventExecutorGroup().schedule(() -> out.completeExceptionally(
              new BackendUnavailableException("could not " + what + ": the slot was still migrating after "
                  + commandTimeout.toMillis() + " ms")), retryDeadline - System.nanoTime(), TimeUnit.NANOSECONDS);
          out.whenComplete((v, f) -> guard.cancel(false));
        }
        r.eventExecutorGroup().schedule(() -> send(on, script, what, call, out, retryDeadline, attempt + 1),
            delayMillis, TimeUnit.MILLISECONDS);
        return;
      } catch (RuntimeException e) { // shutting down
        log.debug("cannot retry after TRYAGAIN: {}", e.toString());
      }
    }
    backend.checkMasterAfter(failure);
    out.completeExceptionally(RedisExceptions.translate(failure, what));
  }

  /** The connection {@link #send} uses instead of the shared one while {@link #releaseOn} sends. */
  private static final ThreadLocal<RedisClusterAsyncCommands<String, String>> routed = new ThreadLocal<>();

  /**
   * Sends what {@code release} sends on {@code on} instead of the shared connection: any lock kind's release,
   * to the node a lane is connected to. {@code release} must send its script on the calling thread.
   */
  <T> CompletionStage<T> releaseOn(RedisClusterAsyncCommands<String, String> on,
      java.util.function.Supplier<CompletionStage<T>> release) {
    routed.set(on);
    try {
      return release.get();
    } finally {
      routed.remove();
    }
  }
}
