package io.locksmith.recipes;

import java.util.Map;
import java.util.Objects;

/**
 * What {@link SegmentedStock#trySell(long)} did. Immutable.
 *
 * @param status whether the units were sold, and if not why
 * @param requested the quantity asked for
 * @param taken for {@link Status#SOLD}: units taken per segment (segment → units, in the order they were
 *     taken; they add up to {@code requested}); empty otherwise
 * @param available for {@link Status#INSUFFICIENT}: the units the sale found (fewer than requested);
 *     0 for {@link Status#SOLD_OUT}; for {@link Status#SOLD} not counted, 0
 */
public record Sale(Status status, long requested, Map<Integer, Long> taken, long available) {

  /** The outcome of a sale. */
  public enum Status {
    /** The units were sold: taken from one segment, or from several when none had enough alone. */
    SOLD,
    /** Nothing was sold: some units are left, but fewer than requested. */
    INSUFFICIENT,
    /** Nothing was sold: no unit is left in any segment. */
    SOLD_OUT
  }

  /**
   * @throws NullPointerException if {@code status} or {@code taken} is null
   */
  public Sale {
    Objects.requireNonNull(status, "status");
    taken = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(
        Objects.requireNonNull(taken, "taken")));
  }

  /** @return whether the units were sold */
  public boolean sold() {
    return status == Status.SOLD;
  }
}
