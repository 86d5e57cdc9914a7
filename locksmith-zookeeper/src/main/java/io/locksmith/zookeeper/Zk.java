package io.locksmith.zookeeper;

import io.locksmith.BackendConfigurationException;
import io.locksmith.BackendUnavailableException;
import io.locksmith.LockException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.api.BackgroundCallback;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;

/**
 * Curator's background operations as {@link CompletableFuture}s with a deadline, and the one place where
 * ZooKeeper's result codes become Locksmith's exceptions. Thread-safe.
 *
 * <p>Replies complete their futures on ZooKeeper's event thread, so what is chained on them must not
 * block. An operation that has not answered within the operation timeout fails with {@link
 * BackendUnavailableException}; Curator may still apply it later (it retries operations whose connection
 * dropped), which the callers allow for: a late create is found by its protected prefix, a late delete
 * removes only its own node.
 */
final class Zk {
  /** Starts one background operation with the given callback. */
  @FunctionalInterface
  interface Op {
    void start(BackgroundCallback callback) throws Exception;
  }

  private final ScheduledExecutorService timer;
  private final long timeoutNanos;
  private final Duration timeout;

  Zk(ScheduledExecutorService timer, Duration timeout) {
    this.timer = timer;
    this.timeout = timeout;
    this.timeoutNanos = timeout.toNanos();
  }

  Duration timeout() {
    return timeout;
  }

  /**
   * Runs {@code op}; the future completes with the reply if its result code is OK or one of {@code
   * accepted}, else exceptionally with the translated failure.
   *
   * @param what the operation, for messages, e.g. {@code "acquire lock 'x'"}
   */
  CompletableFuture<CuratorEvent> call(String what, Op op, Code... accepted) {
    return call(what, op, null, accepted);
  }

  /**
   * As {@link #call(String, Op, Code...)}, and hands a reply that arrives after the future was completed
   * (its deadline passed) to {@code late}, so that what the operation did can be undone or adopted.
   *
   * @param late called on ZooKeeper's event thread with a reply that came too late, or null
   */
  CompletableFuture<CuratorEvent> call(String what, Op op, java.util.function.Consumer<CuratorEvent> late,
      Code... accepted) {
    CompletableFuture<CuratorEvent> reply = new CompletableFuture<>();
    ScheduledFuture<?> deadline;
    try {
      deadline = timer.schedule(() -> reply.completeExceptionally(new BackendUnavailableException(
          what + ": ZooKeeper did not answer within " + timeout.toMillis() + " ms")), timeoutNanos,
          TimeUnit.NANOSECONDS);
    } catch (java.util.concurrent.RejectedExecutionException closed) {
      return CompletableFuture.failedFuture(new IllegalStateException(what + ": the client is closed"));
    }
    reply.whenComplete((e, f) -> deadline.cancel(false));
    try {
      op.start((client, event) -> {
        Code code = Code.get(event.getResultCode());
        boolean taken = code == Code.OK || contains(accepted, code) ? reply.complete(event)
            : reply.completeExceptionally(translate(what, KeeperException.create(code, event.getPath())));
        if (!taken && late != null) {
          late.accept(event);
        }
      });
    } catch (Exception e) {
      reply.completeExceptionally(translate(what, e));
    }
    return reply;
  }

  private static boolean contains(Code[] codes, Code code) {
    for (Code c : codes) {
      if (c == code) {
        return true;
      }
    }
    return false;
  }

  /** @return the code of a reply */
  static Code code(CuratorEvent event) {
    return Code.get(event.getResultCode());
  }

  /**
   * The one translation of ZooKeeper and Curator failures: the connection or session is gone (or the
   * server is busy) → {@link BackendUnavailableException}; the credentials or ACLs do not fit →
   * {@link BackendConfigurationException}; anything else → {@link LockException}. Locksmith's own
   * exceptions pass through.
   */
  static RuntimeException translate(String what, Throwable failure) {
    Throwable t = failure;
    while (t instanceof CompletionException && t.getCause() != null) {
      t = t.getCause();
    }
    if (t instanceof LockException || t instanceof IllegalStateException || t instanceof IllegalArgumentException) {
      return (RuntimeException) t;
    }
    if (t instanceof KeeperException ke) {
      switch (ke.code()) {
        case CONNECTIONLOSS:
        case OPERATIONTIMEOUT:
        case SESSIONEXPIRED:
        case SESSIONMOVED:
        case NOTREADONLY:
        case RECONFIGINPROGRESS:
        case REQUESTTIMEOUT:
        case THROTTLEDOP:
        case QUOTAEXCEEDED:
          return new BackendUnavailableException(what + ": " + describe(ke), ke);
        case NOAUTH:
        case AUTHFAILED:
        case INVALIDACL:
        case SESSIONCLOSEDREQUIRESASLAUTH:
          return new BackendConfigurationException(what + ": ZooKeeper refused the client's credentials or ACL ("
              + describe(ke) + "); check the digest user and password and the ACLs of the lock nodes", ke);
        default:
          return new LockException(what + ": " + describe(ke), ke);
      }
    }
    if (t instanceof InterruptedException) {
      Thread.currentThread().interrupt();
      return new BackendUnavailableException(what + ": interrupted", t);
    }
    if (t.getClass().getName().startsWith("org.apache.curator") && t.getClass().getSimpleName().contains("Connection")) {
      return new BackendUnavailableException(what + ": " + t, t);
    }
    return new LockException(what + ": " + t, t);
  }

  private static String describe(KeeperException e) {
    return "ZooKeeper " + e.code().name().toLowerCase(java.util.Locale.ROOT).replace('_', ' ')
        + (e.getPath() != null ? " (" + e.getPath() + ")" : "");
  }
}
