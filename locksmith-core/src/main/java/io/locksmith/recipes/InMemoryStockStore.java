package io.locksmith.recipes;

import io.locksmith.NoFencingTokenException;
import io.locksmith.StaleTokenException;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A {@link StockStore} in this JVM's memory, with the same fencing rules as the Redis and SQL stores:
 * for tests with {@link io.locksmith.injvm.InJvmLockServer}, and as the reference of the contract.
 * Thread-safe: each item's segments change under the item's monitor.
 */
public final class InMemoryStockStore implements StockStore {
  private final Map<String, long[][]> items = new ConcurrentHashMap<>();

  /** An empty store. */
  public InMemoryStockStore() {}

  @Override
  public int create(String item, int segments) {
    Objects.requireNonNull(item, "item");
    if (segments < 1) {
      throw new IllegalArgumentException("segments must be at least 1, was " + segments);
    }
    return items.computeIfAbsent(item, k -> new long[segments][2]).length; // [units, fence]
  }

  @Override
  public long read(String item, int segment, long token) {
    long[][] segs = segments(item);
    synchronized (segs) {
      long[] seg = segment(item, segs, segment);
      admit(item, segment, seg, token);
      seg[1] = token;
      return seg[0];
    }
  }

  @Override
  public void write(String item, List<SegmentWrite> writes) {
    Objects.requireNonNull(writes, "writes");
    long[][] segs = segments(item);
    synchronized (segs) {
      Set<Integer> seen = new HashSet<>();
      for (SegmentWrite w : writes) {
        if (!seen.add(w.segment())) {
          throw new IllegalArgumentException("segment " + w.segment() + " is written twice");
        }
        if (w.units() < 0) {
          throw new IllegalArgumentException("units must not be negative, was " + w.units());
        }
        admit(item, w.segment(), segment(item, segs, w.segment()), w.token());
      }
      for (SegmentWrite w : writes) {
        long[] seg = segs[w.segment()];
        seg[0] = w.units();
        seg[1] = Math.max(seg[1], w.token());
      }
    }
  }

  @Override
  public long[] units(String item) {
    long[][] segs = items.get(Objects.requireNonNull(item, "item"));
    if (segs == null) {
      return new long[0];
    }
    synchronized (segs) {
      long[] out = new long[segs.length];
      for (int i = 0; i < segs.length; i++) {
        out[i] = segs[i][0];
      }
      return out;
    }
  }

  private long[][] segments(String item) {
    long[][] segs = items.get(Objects.requireNonNull(item, "item"));
    if (segs == null) {
      throw new IllegalArgumentException("no stock item '" + item + "'");
    }
    return segs;
  }

  private static long[] segment(String item, long[][] segs, int segment) {
    if (segment < 0 || segment >= segs.length) {
      throw new IllegalArgumentException("item '" + item + "' has no segment " + segment);
    }
    return segs[segment];
  }

  private static void admit(String item, int segment, long[] seg, long token) {
    String resource = item + "#" + segment;
    if (token < 1) {
      throw new NoFencingTokenException(resource, token, seg[1]);
    }
    if (token < seg[1]) {
      throw new StaleTokenException(resource, token, seg[1]);
    }
  }
}
