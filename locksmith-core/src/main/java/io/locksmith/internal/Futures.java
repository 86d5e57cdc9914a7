package io.locksmith.internal;

import io.locksmith.LockException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;

/** Blocking on backend stages and unwrapping their failures. */
public final class Futures {
  private Futures() {}

  /**
   * Waits for a backend stage. Backend stages always complete within the command timeout, so this
   * cannot hang; an interrupt is remembered and restored rather than abandoning a write half-way.
   *
   * @param stage a backend stage
   * @param <T> its value type
   * @return its value
   * @throws RuntimeException the stage's failure, unwrapped (a {@link LockException} for backend errors)
   */
  public static <T> T join(CompletionStage<T> stage) {
    boolean interrupted = false;
    try {
      while (true) {
        try {
          return stage.toCompletableFuture().get();
        } catch (InterruptedException e) {
          interrupted = true;
        } catch (ExecutionException e) {
          throw unwrap(e.getCause());
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * @param t a failure, possibly wrapped by {@code CompletableFuture}
   * @return it as an unchecked exception: itself if unchecked, else wrapped in {@link LockException}
   */
  public static RuntimeException unwrap(Throwable t) {
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    if (t instanceof RuntimeException re) {
      return re;
    }
    if (t instanceof Error err) {
      throw err;
    }
    return new LockException("backend operation failed: " + t, t);
  }
}
