package io.locksmith.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the annotated method while holding a distributed lock. The lock is taken before the method runs
 * and released when it returns or throws; for a {@code CompletionStage}/{@code CompletableFuture} result,
 * when the future the method returned completes (the caller gets a copy it cannot end the lock with); for
 * a Reactor {@code Mono} or {@code Flux}, per subscription, from subscription until it terminates or is
 * cancelled. Nested and recursive calls on the same lock name on the same thread re-enter.
 *
 * <p>The advisor runs outside {@code @Transactional} (see {@code locksmith.annotation.order}), so the lock
 * is released only after the method's transaction has committed or rolled back; when the method joined a
 * transaction that is still open as it returns, the release waits for that transaction's end. Another
 * instance can never read the old data under the lock.
 *
 * <p>Mistakes fail the start-up rather than running unlocked or sharing one lock: a {@link #name()}
 * variable the method does not provide (such as a parameter name in a class compiled without
 * {@code -parameters}), an unsupported result type, or a {@link #client()} that is not configured.
 * Methods Spring's proxy cannot intercept ({@code private}, {@code final}, ...) are logged at WARN.
 *
 * <p>The method sees its lease through {@link LockedCall#currentLease()} and
 * {@link LockedCall#fencingToken()}, or through a parameter of type {@code io.locksmith.Lease} that the
 * caller passes as {@code null}: the call gets the lease there.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface DistributedLock {

  /**
   * The lock name. Literal text, with SpEL templates in {@code #{...}} over the arguments
   * ({@code "order:#{#order.id}"}, {@code "#{#p0}"}) and beans ({@code "#{@shard.name()}"}); a name that
   * starts with {@code #} or {@code @} is one whole SpEL expression ({@code "#order.id"}). Parameter names
   * need classes compiled with {@code -parameters}; {@code #p0}/{@code #a0} always work. A computed part
   * that is null or blank at a call throws {@code IllegalArgumentException} there, whatever
   * {@link #onFailure()} says.
   *
   * @return the lock name
   */
  String name();

  /**
   * Which lock: an exclusive re-entrant lock (default), a fair one, or a side of a read-write lock.
   *
   * @return the kind
   */
  Kind kind() default Kind.EXCLUSIVE;

  /**
   * How long to wait for the lock, as a duration ({@code "2s"}, {@code "PT0.5S"}, {@code "0"} tries once)
   * or a placeholder; empty means {@code locksmith.annotation.wait-time}.
   *
   * @return the wait time
   */
  String waitTime() default "";

  /**
   * The lease time; empty means the client's default (locksmith.lease-time). The lease is watched
   * (renewed while the method runs) unless {@link #watched()} is false.
   *
   * @return the lease time
   */
  String leaseTime() default "";

  /**
   * Whether the lease is renewed while held; false gives a fixed lease that expires after
   * {@link #leaseTime()} even if the method is still running.
   *
   * @return true for a watched lease
   */
  boolean watched() default true;

  /**
   * The client: empty for the primary one, else a name under {@code locksmith.clients}.
   *
   * @return the client name
   */
  String client() default "";

  /**
   * What happens when the lock is not obtained in time (or the backend cannot be reached).
   *
   * @return the policy
   */
  OnFailure onFailure() default OnFailure.THROW;

  /**
   * For {@link OnFailure#FALLBACK}: a method of the same bean with the same parameter types whose result
   * is returned instead.
   *
   * @return the fallback method's name
   */
  String fallback() default "";

  /** Lock kinds the annotation can take. */
  enum Kind {
    /** An exclusive re-entrant lock. */
    EXCLUSIVE,
    /** An exclusive lock granted in arrival order. */
    FAIR,
    /** The shared side of a read-write lock. */
    READ,
    /** The exclusive side of a read-write lock. */
    WRITE
  }

  /** What a call does when its lock is not obtained. The method never runs unlocked. */
  enum OnFailure {
    /** Throw {@link LockNotAcquiredException} (the default). */
    THROW,
    /** Return what {@link DistributedLock#fallback()} returns. */
    FALLBACK,
    /**
     * Do nothing and return {@code null} (or {@code false}/0 for primitives, an empty {@code Optional}, a
     * completed future): for scheduled jobs that another instance is already running.
     */
    SKIP
  }
}
