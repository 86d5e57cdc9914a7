package io.locksmith.example.stock;

import io.locksmith.spring.LockNotAcquiredException;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/** {@code POST /stock/{sku}/sell}: 200 SOLD, 409 SOLD_OUT or STALE, 503 when the lock was not obtained. */
@RestController
public class StockController {

  private final StockService stock;

  StockController(StockService stock) {
    this.stock = stock;
  }

  /**
   * @param sku the item
   * @return the result
   */
  @PostMapping("/stock/{sku}/sell")
  public ResponseEntity<String> sell(@PathVariable String sku) {
    StockService.Result r = stock.sell(sku);
    return ResponseEntity.status(r == StockService.Result.SOLD ? HttpStatus.OK : HttpStatus.CONFLICT).body(r.name());
  }

  /**
   * @param sku the item
   * @return items left
   */
  @GetMapping("/stock/{sku}")
  public int left(@PathVariable String sku) {
    return stock.left(sku);
  }

  /**
   * @param e the lock was not obtained in time
   * @return 503
   */
  @ExceptionHandler(LockNotAcquiredException.class)
  public ResponseEntity<String> busy(LockNotAcquiredException e) {
    return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).body("BUSY");
  }
}
