package io.locksmith;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;

/**
 * What an operator's walk over a backend's stored locks found: the answer shared by the backend modules'
 * scans ({@code RedisLockScan}, {@code ZooKeeperLockScan}), which the {@code locksmith list} command
 * prints. Applications know their lock names and do not need a walk.
 *
 * <p>A walk is bounded by a number of locks and by a time budget and says which bound ended it, so a
 * partial answer is never mistaken for a complete one. All types here are immutable and thread-safe.
 */
public final class LockScan {
  private LockScan() {}

  /** Why a walk ended. */
  public enum End {
    /** Everything the backend stores under the namespace was walked. */
    FINISHED,
    /** The walk stopped at the number of locks asked for; more may exist. */
    LIMIT_REACHED,
    /** The time budget ran out first; what was found is a part. */
    OUT_OF_TIME
  }

  /**
   * A lock found by a walk: held or waited for when the walk saw it (it may have been released since;
   * read it with the lock's own {@code inspect} to know).
   *
   * @param kind the lock's kind
   * @param name the lock name, without namespace
   */
  public record Found(LockKind kind, String name) {
    /** @throws NullPointerException if a component is null */
    public Found {
      Objects.requireNonNull(kind, "kind");
      Objects.requireNonNull(name, "name");
    }
  }

  /**
   * What one walk found.
   *
   * @param locks the locks held or waited for, at most the limit asked for, ordered by kind (as {@link
   *     LockKind} declares them) and then name
   * @param traces how many of Locksmith's stored objects of the namespace the walk saw, whether or not
   *     they make a lock found (Redis: keys, including retained fencing tokens and stored permit counts;
   *     ZooKeeper: lock parents, including empty ones); 0 after a {@link End#FINISHED} walk means the
   *     namespace shows no trace of use on this server, which tells a mistyped namespace from an idle one
   * @param end why the walk ended
   */
  public record Result(List<Found> locks, long traces, End end) {
    /** @throws NullPointerException if a component is null */
    public Result {
      locks = List.copyOf(locks);
      Objects.requireNonNull(end, "end");
    }

    /**
     * @param found the locks found, in any order
     * @param traces as for {@link #traces()}
     * @param end why the walk ended
     * @return a result with {@code found} in the documented order
     * @throws NullPointerException if {@code found}, one of its elements or {@code end} is null
     */
    public static Result sorted(Collection<Found> found, long traces, End end) {
      List<Found> ordered = new ArrayList<>(found);
      ordered.sort(Comparator.comparing(Found::kind).thenComparing(Found::name));
      return new Result(ordered, traces, end);
    }
  }
}
