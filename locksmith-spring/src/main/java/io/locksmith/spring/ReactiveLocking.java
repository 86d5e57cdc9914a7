package io.locksmith.spring;

import io.locksmith.Lease;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.function.Supplier;
import reactor.core.publisher.Mono;

/**
 * {@link DistributedLock} on a method returning {@code Mono}: the lock is acquired (without blocking) when
 * the result is subscribed to, the method's own {@code Mono} runs under it, and the lease is released when
 * that terminates or is cancelled. Loaded only when Reactor is on the classpath. Stateless.
 */
final class ReactiveLocking {

  private ReactiveLocking() {}

  static boolean isMono(Class<?> type) {
    return Mono.class.isAssignableFrom(type);
  }

  /**
   * @param acquire starts the acquisition: a lease, or empty when the wait ran out
   * @param body the method's {@code Mono}, given the lease
   * @param notAcquired what the call gives when the lock was not obtained (an error, a fallback, or empty)
   */
  static Mono<Object> lockAround(Supplier<CompletionStage<Optional<Lease>>> acquire,
      Function<Lease, Mono<Object>> body, Function<Throwable, Mono<Object>> notAcquired) {
    return Mono.defer(() -> Mono.fromCompletionStage(acquire.get()))
        .onErrorMap(AcquireFailed::new)
        .flatMap(opt -> opt.isEmpty() ? notAcquired.apply(null)
            : Mono.usingWhen(Mono.just(opt.get()), body, l -> Mono.fromCompletionStage(l.releaseAsync()),
                (l, e) -> Mono.fromCompletionStage(l.releaseAsync()), l -> Mono.fromCompletionStage(l.releaseAsync())))
        .onErrorResume(AcquireFailed.class, e -> notAcquired.apply(e.getCause()));
  }

  /** Marks a failure of the acquisition itself, apart from the method's own errors. */
  private static final class AcquireFailed extends RuntimeException {
    private static final long serialVersionUID = 1L;

    AcquireFailed(Throwable cause) {
      super(cause);
    }
  }
}
