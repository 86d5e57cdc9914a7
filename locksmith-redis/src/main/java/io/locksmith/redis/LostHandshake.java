package io.locksmith.redis;

import io.lettuce.core.RedisConnectionException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * Works around races in Lettuce's connect: when the server answers the handshake before Lettuce's connect
 * listener runs, e.g. rejecting the credentials at once on a loaded machine, the handshake handler has
 * already left the pipeline and the connect fails with {@code IllegalStateException("RedisHandshakeHandler
 * not registered")} instead of the server's answer (seen with 6.8.2); with Lettuce 7 the same rejection is
 * sometimes reported as {@code RedisConnectionException("Connection closed prematurely")} (about 1 connect
 * in 100 on a loaded machine, RedisConfigurationErrorsTest). Either turns a configuration error (WRONGPASS)
 * into what looks like an outage. One more attempt gets the real answer; a server that really closes every
 * connection during the handshake fails each attempt alike, and that failure is reported.
 */
final class LostHandshake {
  static final String MESSAGE = "RedisHandshakeHandler not registered";
  /** Lettuce 7's report of the same lost answer (also its report of a server that closed the connection). */
  static final String CLOSED = "Connection closed prematurely";

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

  /** @return whether {@code failure}, or one of its causes, is one of Lettuce's lost-handshake errors */
  static boolean isLost(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof IllegalStateException && MESSAGE.equals(t.getMessage())
          || t instanceof RedisConnectionException && CLOSED.equals(t.getMessage())) {
        return true;
      }
    }
    return false;
  }
}
