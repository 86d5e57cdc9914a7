package io.locksmith;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.OptionalInt;

/**
 * An operator's snapshot of a semaphore, from {@link LockClient#inspectSemaphore(String)}: what the
 * backend stores, read without declaring a permit count (unlike {@link DistributedSemaphore#describe()},
 * which shows the declared count where none is stored, and warns when the two differ). Immutable; it
 * describes the moment it was read and may be stale by the time it is looked at.
 *
 * @param name the semaphore name (without namespace)
 * @param storedPermits the permit count stored with the semaphore, or empty if none is stored (the next
 *     acquisition stores the count its caller declared)
 * @param holders the holders of unexpired permits, one per permit, longest remaining lease first (ties by
 *     owner); may exceed {@code storedPermits} right after an operator lowered the count
 * @param waiters how many waiters the server knows of (0 where the backend does not track them)
 */
public record SemaphoreState(String name, OptionalInt storedPermits, List<PermitHolder> holders, int waiters) {
  private static final Comparator<PermitHolder> ORDER = Comparator.comparing(PermitHolder::remainingTtl)
      .reversed().thenComparing(PermitHolder::owner);

  /**
   * @throws NullPointerException if a reference component or a holder is null
   * @throws IllegalArgumentException if {@code storedPermits} is present and below 1, or {@code waiters} is
   *     negative
   */
  public SemaphoreState {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(storedPermits, "storedPermits");
    if (storedPermits.isPresent() && storedPermits.getAsInt() < 1) {
      throw new IllegalArgumentException("a stored permit count is at least 1, was " + storedPermits.getAsInt());
    }
    if (waiters < 0) {
      throw new IllegalArgumentException("waiters must not be negative, was " + waiters);
    }
    List<PermitHolder> sorted = new ArrayList<>(holders);
    sorted.forEach(h -> Objects.requireNonNull(h, "holder"));
    sorted.sort(ORDER);
    holders = List.copyOf(sorted);
  }

  /** @return how many permits are held under unexpired leases: the number of holders */
  public int taken() {
    return holders.size();
  }

  /** @return whether the backend keeps nothing for this name: no stored count, no holder, no waiter */
  public boolean isEmpty() {
    return storedPermits.isEmpty() && holders.isEmpty() && waiters == 0;
  }
}
