package io.locksmith.recipes;

import io.locksmith.AcquireInterruptedException;
import io.locksmith.AcquireTimeoutException;
import io.locksmith.BackendUnavailableException;
import io.locksmith.DistributedLock;
import io.locksmith.Lease;
import io.locksmith.LockClient;
import io.locksmith.LockOptions;
import io.locksmith.MultiLease;
import io.locksmith.MultiLock;
import io.locksmith.StaleTokenException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;

/**
 * One item's stock split into segments, each behind its own lock, so that sellers of a hot item contend
 * on N locks instead of one: the "segmented lock" of hot inventory. Built over any {@link LockClient}
 * (the segment locks) and a {@link StockStore} (the segments' units and fences).
 *
 * <p><b>Selling.</b> {@link #trySell(long)} starts at a random segment and goes round the segments in
 * order. Each segment is first tried without waiting (with more than one segment); a busy one is skipped
 * and, if no free segment had enough, waited for afterwards (at most {@linkplain Builder#lockWait the lock wait} each). Under a
 * segment's lock the sale reads the units (admitting the lease's fencing token) and, if the segment has
 * enough, writes the rest back with the same token and is done. A segment that is short is released and
 * the sale moves on to the next one, so the last units are sold wherever they sit. If no segment alone
 * has enough but together they do, the sale locks every segment (one {@link MultiLock}, so in a global
 * order: never a deadlock), reads them all, takes the quantity from several segments and writes them in
 * one atomic, fenced store call. Each segment is read once per sale; if all read 0, the result is {@link
 * Sale.Status#SOLD_OUT}, if they add up to less than asked, {@link Sale.Status#INSUFFICIENT}. Units only
 * ever leave a segment through a fenced write, so the stock is never oversold.
 *
 * <p><b>Fencing.</b> Every access of a segment under its lock is fenced: the token is admitted at the
 * read and checked at the write ({@link StockStore}). A seller paused past its lease (GC, {@code
 * SIGSTOP}) finds its write refused with {@link StaleTokenException}: its sale did not happen, and the
 * sale of the later holder stands, so no update is lost. The segment locks must fail closed: options
 * with a {@link io.locksmith.DegradationPolicy} are refused (a degraded lease's token would be refused
 * by the store anyway).
 *
 * <p><b>Refill and rebalance</b> lock every segment and rewrite them in one atomic store call. {@link
 * #total()} and {@link #units()} read without locks: a snapshot.
 *
 * <p><b>Cost.</b> A sale from one free segment: acquire and release of one lock plus two store calls.
 * Throughput grows with the number of segments as long as segments outnumber what one lock can serve
 * (the lock's hold time is what segmentation parallelises); see {@code docs/recipes.md} for measurements.
 *
 * <p><b>Thread-safety.</b> Thread-safe: any number of threads, clients and processes may sell, refill
 * and read the same item at once. Instances are immutable.
 */
public final class SegmentedStock {
  /** The most segments an item may have. */
  public static final int MAX_SEGMENTS = 1024;
  /** How long a sale waits for one segment's lock by default. */
  public static final Duration DEFAULT_LOCK_WAIT = Duration.ofSeconds(5);

  private final LockClient client;
  private final StockStore store;
  private final String item;
  private final int segments;
  private final LockOptions lockOptions;
  private final Duration lockWait;
  private final List<String> lockNames;

  private SegmentedStock(Builder b, int segments) {
    this.client = b.client;
    this.store = b.store;
    this.item = b.item;
    this.segments = segments;
    this.lockOptions = b.lockOptions;
    this.lockWait = b.lockWait;
    List<String> names = new ArrayList<>(segments);
    for (int i = 0; i < segments; i++) {
      names.add(b.lockPrefix + item + "/" + i);
    }
    this.lockNames = List.copyOf(names);
  }

  /**
   * @param client the client whose exclusive locks guard the segments
   * @param store where the segments are kept
   * @param item the item, e.g. a SKU; names its segment locks ({@code stock/<item>/<segment>})
   * @return a builder
   * @throws NullPointerException if an argument is null
   */
  public static Builder builder(LockClient client, StockStore store, String item) {
    return new Builder(client, store, item);
  }

  /** @return the item */
  public String item() {
    return item;
  }

  /** @return the number of segments */
  public int segments() {
    return segments;
  }

  /**
   * @param segment a segment, from 0
   * @return the name of that segment's lock
   * @throws IndexOutOfBoundsException if there is no such segment
   */
  public String lockName(int segment) {
    return lockNames.get(segment);
  }

  /**
   * Sells {@code quantity} units, from one segment if one has enough, else from several; see the class
   * comment. Nothing is sold unless the result is {@link Sale.Status#SOLD}.
   *
   * @param quantity units to sell, at least 1
   * @return the sale, or why nothing was sold
   * @throws StaleTokenException if this seller was superseded between its read and its write of a segment
   *     (paused past its lease): nothing was sold by this call; calling again is safe
   * @throws AcquireTimeoutException if a segment's lock stayed held for the whole lock wait; nothing was
   *     sold
   * @throws AcquireInterruptedException if the thread was interrupted while waiting for a lock (its
   *     interrupt status is set again); nothing was sold
   * @throws BackendUnavailableException if the lock backend cannot be reached; nothing was sold
   * @throws IllegalArgumentException if {@code quantity} is less than 1
   * @throws IllegalStateException if the client is closed
   * @throws RuntimeException what the store throws when it fails (see {@link StockStore}); a write that
   *     timed out may have been applied
   */
  public Sale trySell(long quantity) {
    if (quantity < 1) {
      throw new IllegalArgumentException("quantity must be at least 1, was " + quantity);
    }
    int start = ThreadLocalRandom.current().nextInt(segments);
    long seen = 0;
    List<Integer> busy = new ArrayList<>();
    for (int k = 0; k < segments; k++) {
      int segment = (start + k) % segments;
      // with one segment there is nothing else to try first: wait for it like a plain lock would
      Optional<Lease> lease = segments == 1 ? Optional.empty() : lock(segment).tryAcquire();
      if (lease.isEmpty()) {
        busy.add(segment); // someone sells there now: try the others first
        continue;
      }
      long found = sellFrom(segment, lease.get(), quantity);
      if (found < 0) {
        return sold(quantity, Map.of(segment, quantity));
      }
      seen += found;
    }
    for (int segment : busy) {
      Lease lease = acquire(lock(segment));
      long found = sellFrom(segment, lease, quantity);
      if (found < 0) {
        return sold(quantity, Map.of(segment, quantity));
      }
      seen += found;
    }
    if (seen == 0) {
      return new Sale(Sale.Status.SOLD_OUT, quantity, Map.of(), 0);
    }
    if (seen < quantity) {
      // units only leave through sales and each segment was read once: no more than this is left
      return new Sale(Sale.Status.INSUFFICIENT, quantity, Map.of(), seen);
    }
    return sellAcross(quantity, start);
  }

  /**
   * Under {@code lease} (released here): sells {@code quantity} from the segment if it has enough.
   *
   * @return -1 if sold, else the units the segment has (fewer than {@code quantity})
   */
  private long sellFrom(int segment, Lease lease, long quantity) {
    try (lease) {
      long token = lease.fencingToken();
      long units = store.read(item, segment, token); // the first access: admits the token
      if (units < quantity) {
        return units; // short: release it and move on
      }
      store.write(item, List.of(new StockStore.SegmentWrite(segment, token, units - quantity)));
      return -1;
    }
  }

  /** Every segment locked: takes {@code quantity} from as many segments as needed, in one write. */
  private Sale sellAcross(long quantity, int start) {
    try (MultiLease all = acquireAll()) {
      long[] units = new long[segments];
      long total = 0;
      for (int s = 0; s < segments; s++) {
        units[s] = store.read(item, s, all.fencingToken(lockNames.get(s)));
        total += units[s];
      }
      if (total == 0) {
        return new Sale(Sale.Status.SOLD_OUT, quantity, Map.of(), 0);
      }
      if (total < quantity) {
        return new Sale(Sale.Status.INSUFFICIENT, quantity, Map.of(), total);
      }
      Map<Integer, Long> taken = new LinkedHashMap<>();
      List<StockStore.SegmentWrite> writes = new ArrayList<>();
      long left = quantity;
      for (int k = 0; k < segments && left > 0; k++) {
        int s = (start + k) % segments;
        long take = Math.min(left, units[s]);
        if (take > 0) {
          taken.put(s, take);
          writes.add(new StockStore.SegmentWrite(s, all.fencingToken(lockNames.get(s)), units[s] - take));
          left -= take;
        }
      }
      store.write(item, writes);
      return sold(quantity, taken);
    }
  }

  private static Sale sold(long quantity, Map<Integer, Long> taken) {
    return new Sale(Sale.Status.SOLD, quantity, taken, 0);
  }

  /**
   * Adds {@code units} to the item, spread evenly over the segments (the remainder one unit each to the
   * first segments), under every segment's lock, in one atomic, fenced write.
   *
   * @param units units to add, at least 1
   * @throws IllegalArgumentException if {@code units} is less than 1
   * @throws StaleTokenException if this caller was superseded before its write (paused past its
   *     leases); nothing was added
   * @throws AcquireTimeoutException if a segment's lock stayed held for the whole lock wait
   * @throws AcquireInterruptedException if interrupted while waiting (interrupt status set again)
   * @throws BackendUnavailableException if the lock backend cannot be reached
   * @throws ArithmeticException if a segment would exceed {@link Long#MAX_VALUE}
   */
  public void refill(long units) {
    if (units < 1) {
      throw new IllegalArgumentException("units must be at least 1, was " + units);
    }
    rewrite(current -> {
      long[] next = current.clone();
      for (int s = 0; s < segments; s++) {
        next[s] = Math.addExact(next[s], units / segments + (s < units % segments ? 1 : 0));
      }
      return next;
    });
  }

  /**
   * Evens the segments out: each gets {@code total / segments} units, the remainder one unit each to the
   * first segments. Under every segment's lock, in one atomic, fenced write. Run it when sales have
   * drained some segments, so that sellers find units at their first segment again.
   *
   * @throws StaleTokenException if this caller was superseded before its write; nothing changed
   * @throws AcquireTimeoutException if a segment's lock stayed held for the whole lock wait
   * @throws AcquireInterruptedException if interrupted while waiting (interrupt status set again)
   * @throws BackendUnavailableException if the lock backend cannot be reached
   */
  public void rebalance() {
    rewrite(current -> {
      long total = 0;
      for (long u : current) {
        total += u;
      }
      long[] next = new long[segments];
      for (int s = 0; s < segments; s++) {
        next[s] = total / segments + (s < total % segments ? 1 : 0);
      }
      return next;
    });
  }

  private void rewrite(java.util.function.UnaryOperator<long[]> change) {
    try (MultiLease all = acquireAll()) {
      long[] current = new long[segments];
      for (int s = 0; s < segments; s++) {
        current[s] = store.read(item, s, all.fencingToken(lockNames.get(s)));
      }
      long[] next = change.apply(current);
      List<StockStore.SegmentWrite> writes = new ArrayList<>();
      for (int s = 0; s < segments; s++) {
        if (next[s] != current[s]) {
          writes.add(new StockStore.SegmentWrite(s, all.fencingToken(lockNames.get(s)), next[s]));
        }
      }
      if (!writes.isEmpty()) {
        store.write(item, writes);
      }
    }
  }

  /** @return the units left in all segments: a snapshot read without locks */
  public long total() {
    long total = 0;
    for (long u : units()) {
      total += u;
    }
    return total;
  }

  /** @return the units of each segment (index = segment): a snapshot read without locks */
  public long[] units() {
    return store.units(item);
  }

  private DistributedLock lock(int segment) {
    return client.lock(lockNames.get(segment), lockOptions);
  }

  private Lease acquire(DistributedLock lock) {
    try {
      return lock.acquire(lockWait);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AcquireInterruptedException(lock.name(), e);
    }
  }

  private MultiLease acquireAll() {
    try {
      return MultiLock.of(client, lockOptions, lockNames).acquire(lockWait.multipliedBy(segments));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AcquireInterruptedException(lockNames.get(0), e);
    }
  }

  @Override
  public String toString() {
    return "SegmentedStock[" + item + ", " + segments + " segments]";
  }

  /** Builds a {@link SegmentedStock}; not thread-safe. */
  public static final class Builder {
    private final LockClient client;
    private final StockStore store;
    private final String item;
    private int segments = 20;
    private LockOptions lockOptions;
    private Duration lockWait = DEFAULT_LOCK_WAIT;
    private String lockPrefix = "stock/";

    private Builder(LockClient client, StockStore store, String item) {
      this.client = Objects.requireNonNull(client, "client");
      this.store = Objects.requireNonNull(store, "store");
      this.item = Objects.requireNonNull(item, "item");
      this.lockOptions = client.options().defaultLockOptions();
    }

    /**
     * @param segments how many segments the item is split into, 1 to {@link #MAX_SEGMENTS} (default 20);
     *     1 is a single lock over the whole stock
     * @return this builder
     */
    public Builder segments(int segments) {
      this.segments = segments;
      return this;
    }

    /**
     * @param options the segment locks' lease policy (default: the client's); must not degrade
     * @return this builder
     */
    public Builder lockOptions(LockOptions options) {
      this.lockOptions = options;
      return this;
    }

    /**
     * @param wait how long a sale waits for one busy segment's lock (default {@link #DEFAULT_LOCK_WAIT});
     *     a refill or rebalance waits this times the number of segments for all of them
     * @return this builder
     */
    public Builder lockWait(Duration wait) {
      this.lockWait = wait;
      return this;
    }

    /**
     * @param prefix what the segment lock names start with (default {@code "stock/"}), before
     *     {@code <item>/<segment>}
     * @return this builder
     */
    public Builder lockPrefix(String prefix) {
      this.lockPrefix = prefix;
      return this;
    }

    /**
     * Creates the item's segments in the store if they do not exist (with 0 units; {@link #refill} them).
     *
     * @return the segmented stock
     * @throws NullPointerException if an option is null
     * @throws IllegalArgumentException if the segment count or the lock wait is out of range, the lock
     *     options carry a degradation policy, or a segment lock name is not valid for the client
     * @throws IllegalStateException if the store already holds the item with another number of segments
     *     (a different segmentation of the same units would break the fencing), or the client is closed
     * @throws RuntimeException what the store throws when it fails
     */
    public SegmentedStock build() {
      Objects.requireNonNull(lockOptions, "lockOptions");
      Objects.requireNonNull(lockWait, "lockWait");
      Objects.requireNonNull(lockPrefix, "lockPrefix");
      if (segments < 1 || segments > MAX_SEGMENTS) {
        throw new IllegalArgumentException("segments must be from 1 to " + MAX_SEGMENTS + ", was " + segments);
      }
      if (lockWait.isNegative()) {
        throw new IllegalArgumentException("lockWait must not be negative, was " + lockWait);
      }
      if (lockOptions.degradation().isPresent()) {
        throw new IllegalArgumentException("stock is a correctness resource: its segment locks must fail "
            + "closed, not degrade to JVM-local locks (a degraded lease carries no fencing token)");
      }
      SegmentedStock stock = new SegmentedStock(this, segments);
      for (String name : stock.lockNames) {
        client.lock(name, lockOptions); // validates the names now
      }
      int stored = store.create(item, segments);
      if (stored != segments) {
        throw new IllegalStateException("stock item '" + item + "' is stored with " + stored
            + " segments, not " + segments + "; use the stored count (or a new item)");
      }
      return stock;
    }
  }
}
