package io.locksmith.example.stock;

/**
 * Called at two points of a sale. Without a bean of this type nothing happens there; the multi-instance
 * test registers one to stall an instance, as a long GC pause or a frozen VM would.
 */
public interface SaleHook {

  /**
   * After the sale has its lock, before its first access to the stock row.
   *
   * @param sku the item being sold
   * @param token the sale's fencing token
   */
  default void beforeFirstAccess(String sku, long token) {}

  /**
   * After the sale has read the stock, before it writes.
   *
   * @param sku the item being sold
   * @param token the sale's fencing token
   */
  default void betweenReadAndWrite(String sku, long token) {}
}
