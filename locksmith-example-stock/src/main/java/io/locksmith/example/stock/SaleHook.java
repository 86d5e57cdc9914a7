package io.locksmith.example.stock;

/**
 * Called between a sale's read and its write. Without a bean of this type nothing happens there; the
 * multi-instance test registers one to pause one instance there, as a long GC pause or a stalled VM would.
 */
public interface SaleHook {

  /**
   * @param sku the item being sold
   * @param token the sale's fencing token
   */
  void betweenReadAndWrite(String sku, long token);
}
