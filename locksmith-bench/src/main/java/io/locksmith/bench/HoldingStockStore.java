package io.locksmith.bench;

import io.locksmith.recipes.StockStore;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.locks.LockSupport;

/**
 * A {@link StockStore} that works for a fixed time after each read, before returning: the work a sale
 * does under its segment's lock (recording the order), which is what segmenting the stock spreads out.
 * Used by the bench's segmented scenario and the demo. Thread-safe if the wrapped store is.
 */
public final class HoldingStockStore implements StockStore {
  private final StockStore store;
  private final long holdNanos;

  /**
   * @param store the store that keeps the stock
   * @param hold the work after each read; zero for none
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code hold} is negative
   */
  public HoldingStockStore(StockStore store, Duration hold) {
    this.store = Objects.requireNonNull(store, "store");
    if (hold.isNegative()) {
      throw new IllegalArgumentException("hold must not be negative, was " + hold);
    }
    this.holdNanos = hold.toNanos();
  }

  @Override
  public int create(String item, int segments) {
    return store.create(item, segments);
  }

  @Override
  public long read(String item, int segment, long token) {
    long units = store.read(item, segment, token);
    long end = System.nanoTime() + holdNanos;
    for (long left = holdNanos; left > 0; left = end - System.nanoTime()) {
      LockSupport.parkNanos(left);
    }
    return units;
  }

  @Override
  public void write(String item, List<SegmentWrite> writes) {
    store.write(item, writes);
  }

  @Override
  public long[] units(String item) {
    return store.units(item);
  }
}
