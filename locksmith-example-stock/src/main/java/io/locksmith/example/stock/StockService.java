package io.locksmith.example.stock;

import io.locksmith.StaleTokenException;
import io.locksmith.jdbc.JdbcFencedTable;
import io.locksmith.spring.DistributedLock;
import io.locksmith.spring.LockedCall;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.jdbc.UncategorizedSQLException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.interceptor.TransactionAspectSupport;

/**
 * Sells stock: one sale at a time per item across every instance (the distributed lock), and the stock row
 * fenced with the lock's token from the sale's <em>first</em> access on: the read locks the row and admits
 * the token ({@link JdbcFencedTable#admit}), the write checks it again. An instance that lost its lock
 * while paused is refused at its first access; one paused between its read and its write keeps the row
 * locked, so the next holder reads only after that write (fencing only the write would let the next
 * holder read, the paused write land, and the next write overwrite it: an update lost).
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

  private static final JdbcFencedTable STOCK = JdbcFencedTable.of("stock", "sku", "fence")
      .withQueryTimeout(Duration.ofSeconds(5));

  private final JdbcTemplate jdbc;
  private final DataSource dataSource;
  private final SaleHook hook;

  StockService(JdbcTemplate jdbc, DataSource dataSource, ObjectProvider<SaleHook> hook) {
    this.jdbc = jdbc;
    this.dataSource = dataSource;
    this.hook = hook.getIfAvailable(() -> new SaleHook() { });
  }

  /**
   * Sells one item. The lock is a fixed lease (stock.lease-time) so that a stalled instance loses it; the
   * fenced row then refuses its late access.
   *
   * @param sku the item
   * @return what happened
   */
  @DistributedLock(name = "stock:#{#sku}", waitTime = "${stock.wait-time:10s}", leaseTime = "${stock.lease-time:5s}", watched = false)
  @Transactional
  public Result sell(String sku) {
    long token = LockedCall.fencingToken();
    hook.beforeFirstAccess(sku, token);
    Connection connection = DataSourceUtils.getConnection(dataSource); // the @Transactional's connection
    try {
      // the first access: lock the row and admit the token, refused if a newer holder came first
      Optional<JdbcFencedTable.Admission> row = STOCK.admit(connection, sku, token);
      if (row.isEmpty()) {
        return Result.SOLD_OUT;
      }
      Integer qty = jdbc.queryForObject("select qty from stock where sku = ?", Integer.class, sku);
      if (qty == null || qty <= 0) {
        return Result.SOLD_OUT;
      }
      hook.betweenReadAndWrite(sku, token);
      row.get().update("qty = ?", qty - 1); // ... and fenced again at the write
      jdbc.update("insert into sale (sku, token) values (?, ?)", sku, token);
      return Result.SOLD;
    } catch (StaleTokenException e) {
      TransactionAspectSupport.currentTransactionStatus().setRollbackOnly();
      return Result.STALE;
    } catch (SQLException e) {
      throw new UncategorizedSQLException("sell " + sku, null, e);
    } finally {
      DataSourceUtils.releaseConnection(connection, dataSource);
    }
  }

  /**
   * @param sku the item
   * @return items left
   */
  public int left(String sku) {
    return jdbc.queryForObject("select qty from stock where sku = ?", Integer.class, sku);
  }
}
