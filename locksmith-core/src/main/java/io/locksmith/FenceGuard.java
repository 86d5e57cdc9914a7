package io.locksmith;

import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The resource side of fencing, for a resource that lives in this JVM: remembers the largest fencing
 * token admitted per resource key and refuses actions that carry a smaller one.
 *
 * <p>The rule is the one of {@code docs/fencing.md}: a token greater than or equal to the largest
 * admitted so far is accepted (equal means the same holder acting again) and becomes the largest; a
 * smaller token is refused with {@link StaleTokenException}. {@link #apply(String, long, Supplier)}
 * performs the check and the action atomically: no other action on the same key runs between them.
 * Tokens are only compared within one key; use one key per lock name.
 *
 * <p>Admit the token on <em>every</em> access of the protected data, reads included. If only writes
 * are fenced, a superseded holder that read before it was paused can still write after the new
 * holder's read and before its write, and one of the two updates is lost.
 *
 * <pre>{@code
 * FenceGuard fence = new FenceGuard();
 * try (Lease lease = lock.acquire(Duration.ofSeconds(5))) {
 *   int stock = fence.apply("stock-42", lease.fencingToken(), () -> store.read(42));
 *   fence.apply("stock-42", lease.fencingToken(), () -> store.write(42, stock - 1));
 * } catch (StaleTokenException e) {
 *   // superseded: another holder has acted with a larger token
 * }
 * }</pre>
 *
 * <p><b>Thread-safety.</b> Thread-safe. Actions on the same key are serialized (each key has its own
 * monitor); actions on different keys run concurrently. The action runs on the calling thread while
 * the key's monitor is held, so it must not block for long and must not call back into this guard for
 * the same key from another thread.
 *
 * <p><b>Memory.</b> One small entry per key, kept for the guard's lifetime.
 */
public final class FenceGuard {
  private final ConcurrentHashMap<String, Fence> fences = new ConcurrentHashMap<>();

  /** Creates a guard that has admitted no token yet. */
  public FenceGuard() {}

  /**
   * Admits {@code token} for {@code resource} without an action, raising the largest token seen: for
   * example on a read, so that holders older than this one can no longer write.
   *
   * @param resource the resource key, e.g. the lock name
   * @param token the caller's fencing token
   * @throws NullPointerException if {@code resource} is null
   * @throws StaleTokenException if a larger token has already been admitted for {@code resource}
   */
  public void admit(String resource, long token) {
    apply(resource, token, () -> null);
  }

  /**
   * Checks {@code token} and runs {@code action} atomically. If the token is admitted, the action runs
   * and, if it returns normally, {@code token} becomes the largest seen for {@code resource}. If the
   * action throws, the largest token is left unchanged and the exception propagates.
   *
   * @param resource the resource key, e.g. the lock name
   * @param token the caller's fencing token
   * @param action the guarded access, run at most once, on the calling thread
   * @param <T> the action's result type
   * @return the action's result
   * @throws NullPointerException if {@code resource} or {@code action} is null
   * @throws StaleTokenException if a larger token has already been admitted for {@code resource}; the
   *     action has not run
   * @throws RuntimeException whatever {@code action} throws
   */
  public <T> T apply(String resource, long token, Supplier<T> action) {
    Objects.requireNonNull(resource, "resource");
    Objects.requireNonNull(action, "action");
    Fence fence = fences.computeIfAbsent(resource, k -> new Fence());
    synchronized (fence) {
      if (fence.admitted && token < fence.highest) {
        throw new StaleTokenException(resource, token, fence.highest);
      }
      T result = action.get();
      fence.highest = fence.admitted ? Math.max(fence.highest, token) : token;
      fence.admitted = true;
      return result;
    }
  }

  /**
   * @param resource the resource key
   * @return the largest token admitted for {@code resource}, or empty if none was
   * @throws NullPointerException if {@code resource} is null
   */
  public OptionalLong highest(String resource) {
    Objects.requireNonNull(resource, "resource");
    Fence fence = fences.get(resource);
    if (fence == null) {
      return OptionalLong.empty();
    }
    synchronized (fence) {
      return fence.admitted ? OptionalLong.of(fence.highest) : OptionalLong.empty();
    }
  }

  private static final class Fence {
    boolean admitted;
    long highest;
  }
}
