package io.locksmith.example.stock;

import io.locksmith.spring.DistributedLock;
import io.locksmith.spring.LockedCall;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * Sells stock: one sale at a time per item across every instance (the distributed lock), and every write
 * fenced with the lock's token, so that an instance that lost its lock while paused cannot write.
 */
@Service
public class StockService {

  /** What a sale did. */
  public enum Result {
    /** One item sold. */
    SOLD,
    /** None left. */
    SOLD_OUT,
    /** This instance's lock had passed to a newer holder: its write was refused. */
    STALE
  }

  private final JdbcTemplate jdbc;
  private final SaleHook hook;

  StockService(JdbcTemplate jdbc, ObjectProvider<SaleHook> hook) {
    this.jdbc = jdbc;
    this.hook = hook.getIfAvailable(() -> (sku, token) -> { });
  }

  /**
   * Sells one item. The lock is a fixed lease (stock.lease-time) so that a stalled instance loses it; the
   * fenced update then refuses its late write.
   *
   * @param sku the item
   * @return what happened
   */
  @DistributedLock(name = "stock:#{#sku}", waitTime = "${stock.wait-time:10s}", leaseTime = "${stock.lease-time:5s}", watched = false)
  @Transactional
  public Result sell(String sku) {
    long token = LockedCall.fencingToken();
    Integer qty = jdbc.queryForObject("select qty from stock where sku = ?", Integer.class, sku);
    if (qty == null || qty <= 0) {
      return Result.SOLD_OUT;
    }
    hook.betweenReadAndWrite(sku, token);
    // the fence: only a token at least as new as the last writer's may write
    int updated = jdbc.update("update stock set qty = ?, fence = ? where sku = ? and fence <= ?", qty - 1, token, sku, token);
    if (updated == 0) {
      return Result.STALE;
    }
    jdbc.update("insert into sale (sku, token) values (?, ?)", sku, token);
    return Result.SOLD;
  }

  /**
   * @param sku the item
   * @return items left
   */
  public int left(String sku) {
    return jdbc.queryForObject("select qty from stock where sku = ?", Integer.class, sku);
  }
}
