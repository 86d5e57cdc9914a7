package io.locksmith.bench;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.locksmith.LockClient;
import io.locksmith.recipes.Sale;
import io.locksmith.recipes.SegmentedStock;
import io.locksmith.recipes.StockStore;
import io.locksmith.redis.RedisLockClient;
import io.locksmith.redis.RedisStockStore;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The segmented scenario's "implementation": one sale of one unit per cycle through {@link
 * SegmentedStock} with a given segment count, on one Redis (locks and stock). Each sale holds its
 * segment's lock for {@code hold} between its read and its write (the order being recorded), which is
 * the work segmentation spreads over the segments. The stock is large enough never to run out.
 */
final class SegmentedImpl implements LockImpl {
  /** Units stocked: far more than any run sells, so that every sale is served by its first segment. */
  static final long STOCK = 1_000_000_000L;

  private final String name;
  private final LockClient client;
  private final RedisClient redis;
  private final StatefulRedisConnection<String, String> connection;
  private final SegmentedStock stock;

  SegmentedImpl(String uri, int segments, Duration hold) {
    this.name = "segments-" + segments;
    this.client = RedisLockClient.create(uri);
    this.redis = RedisClient.create(uri);
    this.connection = redis.connect();
    StockStore store = new HoldingStockStore(RedisStockStore.of(connection.sync(), "bench-stock"), hold);
    // an item per segment count: the same stock and workload, segmented differently
    String item = "bench-item-" + segments + "-" + Long.toHexString(System.nanoTime());
    this.stock = SegmentedStock.builder(client, store, item).segments(segments)
        .lockWait(Duration.ofSeconds(30)).build();
    stock.refill(STOCK);
  }

  @Override
  public String name() {
    return name;
  }

  /** One sale; the lock name and wait of the harness do not apply (a sale has its own lock wait). */
  @Override
  public Held acquire(String ignoredName, long ignoredWaitNanos) {
    Sale sale = stock.trySell(1);
    if (!sale.sold()) {
      throw new IllegalStateException("the bench stock ran out: " + sale);
    }
    return () -> { };
  }

  @Override
  public void close() {
    connection.close();
    redis.shutdown(0, 2, TimeUnit.SECONDS);
    client.close();
  }
}
