package io.locksmith.redis;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * Works around a race in Lettuce's connect (seen with 6.8.2): when the server answers the handshake
 * before Lettuce's connect listener runs, e.g. rejecting the credentials at once on a loaded machine,
 * the handshake handler has already left the pipeline and the connect fails with {@code
 * IllegalStateException("RedisHandshakeHandler not registered")} instead of the server's answer. That
 * turns a configuration error (WRONGPASS) into what looks like an outage. One more attempt gets the real
 * answer.
 */
final class LostHandshake {
  static final String MESSAGE = "RedisHandshakeHandler not registered";

  private LostHandshake() {}

  /** At most this many connects when each loses the handshake's answer (the race did repeat, rarely). */
  static final int ATTEMPTS = 3;

  /**
   * @return the connect's outcome, connecting again (up to {@link #ATTEMPTS} in all) while Lettuce loses
   *     the handshake's answer
   */
  static <T> CompletableFuture<T> connect(Supplier<? extends CompletionStage<T>> connect) {
    return connect(connect, ATTEMPTS);
  }

  private static <T> CompletableFuture<T> connect(Supplier<? extends CompletionStage<T>> connect, int left) {
    return start(connect).handle((c, failure) -> failure == null ? CompletableFuture.completedFuture(c)
        : left > 1 && isLost(failure) ? connect(connect, left - 1) : CompletableFuture.<T>failedFuture(failure))
        .thenCompose(f -> f);
  }

  private static <T> CompletableFuture<T> start(Supplier<? extends CompletionStage<T>> connect) {
    try {
      return connect.get().toCompletableFuture();
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** @return whether {@code failure}, or one of its causes, is Lettuce's lost-handshake error */
  static boolean isLost(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof IllegalStateException && MESSAGE.equals(t.getMessage())) {
        return true;
      }
    }
    return false;
  }
}
