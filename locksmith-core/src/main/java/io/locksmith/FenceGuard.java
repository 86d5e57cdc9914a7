package io.locksmith;

import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The resource side of fencing, for a resource that lives in this JVM: remembers the largest fencing
 * token admitted per resource key and refuses access with a smaller one.
 *
 * <p>The rule is the one of {@code docs/fencing.md}: a token greater than or equal to the largest
 * admitted so far is accepted (equal means the same holder acting again) and becomes the largest; a
 * smaller token is refused with {@link StaleTokenException}. Tokens are only compared within one key;
 * use one key per lock name.
 *
 * <p><b>Admit the token at the first access of the resource under the lock</b>, the read, not only at
 * the write. A write-only fence loses updates: holder A (token 1) reads, is paused and loses its lease;
 * B (token 2) is granted and reads; A wakes and writes. Token 1 is still the largest the resource has
 * seen, so A's stale write is accepted; B then writes a value computed from what it read before A's
 * write, and A's update is lost. Admitting at the read raises the fence to 2 when B reads, so A's write
 * is refused. The API makes that the short path:
 *
 * <pre>{@code
 * FenceGuard fence = new FenceGuard();
 * try (Lease lease = lock.acquire(Duration.ofSeconds(5))) {
 *   FenceGuard.Admission stock42 = fence.admit("stock-42", lease.fencingToken()); // first access
 *   int stock = stock42.apply(() -> store.read(42));
 *   stock42.apply(() -> store.write(42, stock - 1)); // refused if a later holder was admitted since
 * } catch (StaleTokenException e) {
 *   // superseded: another holder has been admitted with a larger token
 * }
 * }</pre>
 *
 * <p><b>No token, no access.</b> Tokens start at 1. A {@linkplain Lease#isDegraded() degraded} lease
 * carries {@link Lease#NO_FENCING_TOKEN} (0) because it excludes only within its JVM; the guard refuses
 * it, and any token below 1, with {@link NoFencingTokenException}.
 *
 * <p>{@link #apply(String, long, Supplier)} admits and acts in one atomic step; it suits a whole
 * read-modify-write done inside one action, or a first access that is itself the action.
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
  private final Consumer<? super StaleTokenException> onStale;

  /** Creates a guard that has admitted no token yet. */
  public FenceGuard() {
    this(e -> { });
  }

  /**
   * Creates a guard that has admitted no token yet and tells {@code onStale} of every stale token it
   * refuses, before the refusal is thrown: to count them (e.g. {@code
   * e -> metrics.staleWriteRejected(e.resource())} with {@code locksmith-micrometer}) or log them.
   * {@code onStale} runs on the refused caller's thread; an exception from it is not caught.
   *
   * @param onStale told of each refusal
   * @throws NullPointerException if {@code onStale} is null
   */
  public FenceGuard(Consumer<? super StaleTokenException> onStale) {
    this.onStale = Objects.requireNonNull(onStale, "onStale");
  }

  /**
   * Admits {@code token} for {@code resource}: the first access of the resource under the lock. Raises
   * the largest token seen to {@code token}, so that every holder older than this one is refused from
   * now on, even one that read before this call. Then access the resource through the returned
   * {@link Admission}, which checks the token again at each access.
   *
   * @param resource the resource key, e.g. the lock name
   * @param token the caller's fencing token
   * @return the caller's admission, for its reads and writes of {@code resource}
   * @throws NullPointerException if {@code resource} is null
   * @throws StaleTokenException if a larger token has already been admitted for {@code resource}
   * @throws NoFencingTokenException if {@code token} is below 1, as a {@linkplain Lease#isDegraded()
   *     degraded} lease's {@link Lease#NO_FENCING_TOKEN} is; nothing is admitted
   */
  public Admission admit(String resource, long token) {
    apply(resource, token, () -> null);
    return new Admission(this, resource, token);
  }

  /**
   * Admits {@code token} and runs {@code action} atomically. If the token is admitted, the action runs
   * and, if it returns normally, {@code token} becomes the largest seen for {@code resource}. If the
   * action throws, the largest token is left unchanged and the exception propagates.
   *
   * <p>Use it for the first access of the resource under the lock (or for the whole read-modify-write
   * inside one action). Calling it only for the write, after a read that did not go through this guard,
   * is the write-only fence that loses updates (see the class comment).
   *
   * @param resource the resource key, e.g. the lock name
   * @param token the caller's fencing token
   * @param action the guarded access, run at most once, on the calling thread
   * @param <T> the action's result type
   * @return the action's result
   * @throws NullPointerException if {@code resource} or {@code action} is null
   * @throws StaleTokenException if a larger token has already been admitted for {@code resource}; the
   *     action has not run
   * @throws NoFencingTokenException if {@code token} is below 1, as a {@linkplain Lease#isDegraded()
   *     degraded} lease's {@link Lease#NO_FENCING_TOKEN} is; the action has not run
   * @throws RuntimeException whatever {@code action} throws
   */
  public <T> T apply(String resource, long token, Supplier<T> action) {
    Objects.requireNonNull(resource, "resource");
    Objects.requireNonNull(action, "action");
    if (token < 1) {
      // a degraded lease's token (0): it excludes only within its JVM, so the fence must not admit it
      OptionalLong seen = highest(resource);
      throw new NoFencingTokenException(resource, token, seen.orElse(0));
    }
    Fence fence = fences.computeIfAbsent(resource, k -> new Fence());
    synchronized (fence) {
      if (fence.admitted && token < fence.highest) {
        StaleTokenException stale = new StaleTokenException(resource, token, fence.highest);
        onStale.accept(stale);
        throw stale;
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

  /**
   * A holder's admission to one resource, from {@link FenceGuard#admit(String, long)}: each access
   * through it checks that no larger token has been admitted for the resource since.
   *
   * <p>Thread-safety: immutable; may be used from any thread (the lease it belongs to may be too).
   */
  public static final class Admission {
    private final FenceGuard guard;
    private final String resource;
    private final long token;

    private Admission(FenceGuard guard, String resource, long token) {
      this.guard = guard;
      this.resource = resource;
      this.token = token;
    }

    /** @return the resource key this admission is for */
    public String resource() {
      return resource;
    }

    /** @return the fencing token that was admitted */
    public long token() {
      return token;
    }

    /**
     * Runs {@code action} (a read or a write of the resource) if this admission still stands, with the
     * same atomicity as {@link FenceGuard#apply(String, long, Supplier)}.
     *
     * @param action the guarded access, run at most once, on the calling thread
     * @param <T> the action's result type
     * @return the action's result
     * @throws NullPointerException if {@code action} is null
     * @throws StaleTokenException if a larger token has been admitted for the resource since; the action
     *     has not run
     * @throws RuntimeException whatever {@code action} throws
     */
    public <T> T apply(Supplier<T> action) {
      return guard.apply(resource, token, action);
    }

    /**
     * Runs {@code action} if this admission still stands; see {@link #apply(Supplier)}.
     *
     * @param action the guarded access, run at most once, on the calling thread
     * @throws NullPointerException if {@code action} is null
     * @throws StaleTokenException if a larger token has been admitted for the resource since; the action
     *     has not run
     * @throws RuntimeException whatever {@code action} throws
     */
    public void run(Runnable action) {
      Objects.requireNonNull(action, "action");
      guard.apply(resource, token, () -> {
        action.run();
        return null;
      });
    }

    @Override
    public String toString() {
      return "Admission[" + resource + ", token " + token + "]";
    }
  }

  private static final class Fence {
    boolean admitted;
    long highest;
  }
}
