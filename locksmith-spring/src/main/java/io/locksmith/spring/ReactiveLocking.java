package io.locksmith.spring;

import io.locksmith.Lease;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Supplier;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * {@link DistributedLock} on a method returning {@code Mono} or {@code Flux}: the lock is acquired (without
 * blocking) when the result is subscribed to, the method's own publisher runs under it, and the lease is
 * released when that terminates or is cancelled; a {@code Flux} holds the lock for its whole stream. Each
 * subscription acquires anew. A subscription cancelled while its acquisition is pending releases the lease
 * that acquisition later brings. Loaded only when Reactor is on the classpath. Stateless.
 */
final class ReactiveLocking {

  private ReactiveLocking() {}

  static boolean isMono(Class<?> type) {
    return Mono.class.isAssignableFrom(type);
  }

  static boolean isFlux(Class<?> type) {
    return Flux.class.isAssignableFrom(type);
  }

  /** Whether the type is a Reactive Streams publisher (Mono, Flux or another library's). */
  static boolean isPublisher(Class<?> type) {
    return Publisher.class.isAssignableFrom(type);
  }

  /**
   * The lease of one subscription: the acquisition, whose lease is released if the subscription is
   * cancelled before it arrives (the cancel and the hand-over race; whichever comes second releases).
   */
  private static Mono<Optional<Lease>> acquisition(Supplier<CompletionStage<Optional<Lease>>> acquire) {
    return Mono.defer(() -> {
      CompletableFuture<Optional<Lease>> pending = acquire.get().toCompletableFuture();
      AtomicInteger state = new AtomicInteger(); // 0 pending, 1 handed over, 2 cancelled
      // the body is subscribed where the lease arrives: not on the client's few completion threads, which every
      // async acquisition of the client needs (a body that blocks there would stall them all), but on Reactor's
      // scheduler for work that may block; a lease queued there when the subscription is cancelled is released below
      return Mono.fromFuture(pending, true)
          .publishOn(Schedulers.boundedElastic())
          .doOnCancel(() -> {
            if (state.compareAndSet(0, 2)) {
              pending.thenAccept(o -> o.ifPresent(Lease::releaseAsync));
            }
          })
          .<Optional<Lease>>handle((o, sink) -> {
            if (state.compareAndSet(0, 1)) {
              sink.next(o);
            } else {
              o.ifPresent(Lease::releaseAsync); // cancelled meanwhile: nobody will run under it
            }
          });
    }).onErrorMap(AcquireFailed::new);
  }

  /**
   * As {@link #lockAround} for a {@code Flux}: the lease is held from the acquisition until the stream
   * completes, fails or is cancelled.
   */
  static Flux<Object> lockAroundMany(Supplier<CompletionStage<Optional<Lease>>> acquire,
      Function<Lease, Flux<Object>> body, Function<Throwable, Flux<Object>> notAcquired) {
    return acquisition(acquire)
        .flatMapMany(opt -> opt.isEmpty() ? notAcquired.apply(null)
            : Flux.usingWhen(Mono.just(opt.get()), body, l -> Mono.fromCompletionStage(l.releaseAsync()),
                (l, e) -> Mono.fromCompletionStage(l.releaseAsync()), l -> Mono.fromCompletionStage(l.releaseAsync())))
        .onErrorResume(AcquireFailed.class, e -> notAcquired.apply(e.getCause()));
  }

  /**
   * @param acquire starts the acquisition: a lease, or empty when the wait ran out
   * @param body the method's {@code Mono}, given the lease
   * @param notAcquired what the call gives when the lock was not obtained (an error, a fallback, or empty)
   */
  static Mono<Object> lockAround(Supplier<CompletionStage<Optional<Lease>>> acquire,
      Function<Lease, Mono<Object>> body, Function<Throwable, Mono<Object>> notAcquired) {
    return acquisition(acquire)
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
