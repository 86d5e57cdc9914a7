package io.locksmith.example.stock;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/** The stock service: {@code POST /stock/{sku}/sell} sells one item. */
@SpringBootApplication
public class StockApplication {

  /**
   * Runs the service.
   *
   * @param args Spring Boot arguments, e.g. {@code --locksmith.redis.uri=redis://localhost:6379}
   */
  public static void main(String[] args) {
    SpringApplication.run(StockApplication.class, args);
  }
}
