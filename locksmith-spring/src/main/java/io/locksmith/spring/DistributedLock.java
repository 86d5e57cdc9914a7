package io.locksmith.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the annotated method while holding a distributed lock. The lock is taken before the method runs
 * and released when it returns or throws; for a {@code CompletionStage}/{@code CompletableFuture} result,
 * when that completes; for a Reactor {@code Mono}, from subscription until it terminates or is cancelled. Nested and recursive calls on the same lock name on the same thread re-enter.
 *
 * <p>The advisor runs outside {@code @Transactional} (see {@code locksmith.annotation.order}), so the lock
 * is released only after the method's transaction has committed or rolled back: another instance can
 * never read the old data under the lock.
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
   * starts with {@code #} or {@code @} is one whole SpEL expression ({@code "#order.id"}).
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
