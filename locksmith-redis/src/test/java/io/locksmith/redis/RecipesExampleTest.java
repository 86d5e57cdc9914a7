package io.locksmith.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.locksmith.DegradationCounter;
import io.locksmith.DegradationPolicy;
import io.locksmith.DistributedLock;
import io.locksmith.Lease;
import io.locksmith.LockClient;
import io.locksmith.LockOptions;
import io.locksmith.MultiLease;
import io.locksmith.StaleTokenException;
import io.locksmith.recipes.Sale;
import io.locksmith.recipes.SegmentedStock;
import io.locksmith.testkit.RedisServer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The examples of {@code docs/recipes.md}, run as written against a real Redis (the page's code is
 * copied from the bodies between the {@code // ---} markers). Run them with {@code mvn -pl
 * locksmith-redis -am test -Dtest=RecipesExampleTest -Dsurefire.failIfNoSpecifiedTests=false}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RecipesExampleTest {
  private static RedisServer redis;
  private static LockClient locks;
  private static RedisClient dataClient;
  private static StatefulRedisConnection<String, String> data;

  @BeforeAll
  static void start() {
    redis = RedisServer.start();
    locks = RedisLockClient.create(redis.uri());
    dataClient = RedisClient.create(redis.uri());
    data = dataClient.connect();
  }

  @AfterAll
  static void stop() {
    data.close();
    dataClient.shutdown();
    locks.close();
    redis.close();
  }

  @Test
  void transferBetweenTwoAccounts() throws Exception {
    RedisFencedValue alice = RedisFencedValue.of(data.sync(), "balance:alice");
    RedisFencedValue bob = RedisFencedValue.of(data.sync(), "balance:bob");
    data.sync().set("balance:alice", "100");
    data.sync().set("balance:bob", "0");
    // --- multi-lock
    // the order of the names does not matter: every caller locks them in the same (ascending) order
    try (MultiLease both = locks.multiLock("account:bob", "account:alice").acquire(Duration.ofSeconds(5))) {
      long fromToken = both.fencingToken("account:alice");
      long toToken = both.fencingToken("account:bob");
      int from = Integer.parseInt(alice.read(fromToken).orElse("0")); // admits alice's token
      int to = Integer.parseInt(bob.read(toToken).orElse("0"));       // admits bob's token
      alice.write(fromToken, Integer.toString(from - 30));
      bob.write(toToken, Integer.toString(to + 30));
    } catch (StaleTokenException e) {
      // superseded on one of the accounts: stop, do not retry with these tokens
    }
    // ---
    assertThat(data.sync().get("balance:alice")).isEqualTo("70");
    assertThat(data.sync().get("balance:bob")).isEqualTo("30");
  }

  @Test
  void anEfficiencyLockThatMayDegrade() throws Exception {
    // --- degradation
    DegradationCounter degraded = new DegradationCounter(); // or a metrics binding of your own
    LockOptions efficiency = LockOptions.builder()
        .watchedLease(Duration.ofSeconds(30))
        .degradation(DegradationPolicy.builder().listener(degraded).build())
        .build();
    DistributedLock report = locks.lock("nightly-report", efficiency);
    try (Lease lease = report.acquire(Duration.ofSeconds(10))) {
      if (lease.isDegraded()) {
        // Redis was unreachable: only this JVM is kept out. Fine for a report, never for money.
      }
      // recompute the report
    }
    // ---
    assertThat(degraded.degradedGrants()).isZero();
  }

  @Test
  void segmentedStockForAHotItem() {
    // --- segmented stock
    SegmentedStock stock = SegmentedStock.builder(locks, RedisStockStore.of(data.sync()), "sku-42")
        .segments(20)
        .build();
    stock.refill(1_000); // 50 units in each of the 20 segments

    Sale sale = stock.trySell(2);
    switch (sale.status()) {
      case SOLD -> System.out.println("sold 2 from segment(s) " + sale.taken().keySet());
      case INSUFFICIENT -> System.out.println("only " + sale.available() + " left");
      case SOLD_OUT -> System.out.println("sold out");
    }
    System.out.println(stock.total() + " left"); // 998
    // ---
    assertThat(sale.sold()).isTrue();
    assertThat(stock.total()).isEqualTo(998);
  }
}
