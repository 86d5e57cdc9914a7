package io.locksmith.example.stock;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.testkit.RedisServer;
import io.locksmith.testkit.postgres.PostgresServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Two instances of the stock service (two application contexts, each with its own web server, lock client
 * and connection pool) on one Redis and one PostgreSQL: they sell exactly the stock, never more, even
 * with one instance paused after taking its lock, before its first access, until its lease has run out.
 */
class StockServiceInstancesTest {

  private static final int STOCK = 40;

  static RedisServer redis;
  static PostgresServer postgres;
  static final CountDownLatch paused = new CountDownLatch(1);
  static final CountDownLatch resume = new CountDownLatch(1);
  static final AtomicBoolean pauseNext = new AtomicBoolean();
  static ConfigurableApplicationContext a;
  static ConfigurableApplicationContext b;
  static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @BeforeAll
  static void start() {
    redis = RedisServer.start();
    postgres = PostgresServer.start();
    a = instance("a", new SaleHook() {
      @Override
      public void beforeFirstAccess(String sku, long token) {
        if (sku.equals("A1") && pauseNext.compareAndSet(true, false)) {
          paused.countDown();
          // stalled past its lease (1 s, fixed) before touching the row: another instance takes the lock
          await(resume);
        }
      }

      @Override
      public void betweenReadAndWrite(String sku, long token) {
        if (sku.equals("B1")) {
          aRead.countDown();
          await(resumeA); // stalled past its lease, holding what it read
        }
      }
    });
    b = instance("b", new SaleHook() {
      @Override
      public void betweenReadAndWrite(String sku, long token) {
        if (sku.equals("B1")) {
          bRead.countDown();
          await(aDone); // the write-only fence's bad interleaving: a's late write lands between b's read and write
        }
      }
    });
    a.getBean(JdbcTemplate.class).update("insert into stock (sku, qty) values ('A1', ?)", STOCK);
    a.getBean(JdbcTemplate.class).update("insert into stock (sku, qty) values ('B1', 10)");
  }

  static final CountDownLatch aRead = new CountDownLatch(1);
  static final CountDownLatch resumeA = new CountDownLatch(1);
  static final CountDownLatch bRead = new CountDownLatch(1);
  static final CountDownLatch aDone = new CountDownLatch(1);

  static void await(CountDownLatch latch) {
    try {
      latch.await(60, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  static ConfigurableApplicationContext instance(String name, SaleHook hook) {
    return new SpringApplicationBuilder(StockApplication.class)
        .initializers(ctx -> ctx.getBeanFactory().registerSingleton("saleHook", hook))
        .properties(Map.of(
            "server.port", "0",
            "spring.application.name", "stock-" + name,
            "spring.datasource.url", postgres.jdbcUrl(),
            "locksmith.redis.uri", redis.uri(),
            "locksmith.client-name", "stock-" + name,
            "stock.lease-time", "1s",
            "stock.wait-time", "20s"))
        .run();
  }

  @AfterAll
  static void stop() {
    resume.countDown();
    resumeA.countDown();
    aDone.countDown();
    for (AutoCloseable c : new AutoCloseable[] {a, b, postgres, redis}) {
      try {
        if (c != null) {
          c.close();
        }
      } catch (Exception ignored) {
        // best effort
      }
    }
  }

  static CompletableFuture<HttpResponse<String>> sell(ConfigurableApplicationContext instance) {
    return sell(instance, "A1");
  }

  static CompletableFuture<HttpResponse<String>> sell(ConfigurableApplicationContext instance, String sku) {
    // the port Boot published for the started server: the same property on Boot 3.5 and 4, where the
    // web-server context class moved (org.springframework.boot.web.server.context)
    int port = instance.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/stock/" + sku + "/sell"))
        .timeout(Duration.ofSeconds(90)).POST(HttpRequest.BodyPublishers.noBody()).build();
    return http.sendAsync(request, HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void twoInstancesSellExactlyTheStockAndAPausedOnesLateWriteIsRefused() throws Exception {
    // 1. instance a takes the lock and stalls before its first access to the row
    pauseNext.set(true);
    CompletableFuture<HttpResponse<String>> stalled = sell(a);
    assertThat(paused.await(30, TimeUnit.SECONDS)).isTrue();
    // 2. meanwhile b sells (it gets the lock once a's fixed lease has run out)
    List<HttpResponse<String>> byB = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      byB.add(sell(b).get(60, TimeUnit.SECONDS));
    }
    assertThat(byB).allSatisfy(r -> assertThat(r.body()).isEqualTo("SOLD"));
    // 3. a wakes up and goes on as if it still held the lock: the row refuses its token
    resume.countDown();
    HttpResponse<String> late = stalled.get(60, TimeUnit.SECONDS);
    assertThat(late.statusCode()).isEqualTo(409);
    assertThat(late.body()).isEqualTo("STALE");
    // 4. both instances sell the rest concurrently, with more requests than items
    Map<String, Integer> results = new ConcurrentHashMap<>();
    List<CompletableFuture<HttpResponse<String>>> all = new ArrayList<>();
    for (int i = 0; i < STOCK + 10; i++) {
      all.add(sell(i % 2 == 0 ? a : b));
    }
    for (CompletableFuture<HttpResponse<String>> f : all) {
      results.merge(f.get(90, TimeUnit.SECONDS).body(), 1, Integer::sum);
    }
    JdbcTemplate jdbc = a.getBean(JdbcTemplate.class);
    int left = jdbc.queryForObject("select qty from stock where sku = 'A1'", Integer.class);
    int sales = jdbc.queryForObject("select count(*) from sale where sku = 'A1'", Integer.class);
    assertThat(results.get("SOLD")).as("sold in the concurrent phase: %s", results).isEqualTo(STOCK - 5);
    assertThat(results.get("SOLD_OUT")).as("the other requests: nothing left").isEqualTo(10 + 5);
    assertThat(left).isZero();
    assertThat(sales).as("never more sales than stock").isEqualTo(STOCK);
    // each sale wrote under a newer token than the one before
    List<Long> tokens = jdbc.queryForList("select token from sale where sku = 'A1' order by id", Long.class);
    assertThat(tokens).isSorted().doesNotHaveDuplicates();
  }

  /**
   * The interleaving that loses an update when only the write is fenced: A reads, stalls past its lease, B
   * takes the lock and reads, A's late write lands, B writes what it computed from its stale read. Here the
   * row is admitted at the first access, so B cannot read until A's transaction ends: A's sale and B's
   * both count. (With the old write-only fence this test ends with 9 left after two sales.)
   */
  @Test
  void aHolderPausedBetweenItsReadAndItsWriteLosesNoUpdate() throws Exception {
    JdbcTemplate jdbc = a.getBean(JdbcTemplate.class);
    CompletableFuture<HttpResponse<String>> byA = sell(a, "B1");
    assertThat(aRead.await(30, TimeUnit.SECONDS)).isTrue();
    CompletableFuture<HttpResponse<String>> byB = sell(b, "B1");
    // B has the lock once A's 1 s lease is over; then it either reads (a write-only fence lets it) or waits
    // for A's row lock (admitted at A's read): go on once one of the two is seen
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (bRead.getCount() > 0 && jdbc.queryForObject("select count(*) from pg_locks where not granted", Integer.class) == 0) {
      assertThat(System.nanoTime()).as("B reads or waits for the row").isLessThan(deadline);
      Thread.sleep(20); // polling the database for B's state, not a synchronization by time
    }
    resumeA.countDown();
    HttpResponse<String> aAnswer = byA.get(60, TimeUnit.SECONDS);
    aDone.countDown();
    HttpResponse<String> bAnswer = byB.get(60, TimeUnit.SECONDS);
    int sales = jdbc.queryForObject("select count(*) from sale where sku = 'B1'", Integer.class);
    int left = jdbc.queryForObject("select qty from stock where sku = 'B1'", Integer.class);
    assertThat(List.of(aAnswer.body(), bAnswer.body())).as("A's late write under its still-highest token, then B").containsExactly("SOLD", "SOLD");
    assertThat(left).as("10 items, %d sales recorded: no update lost", sales).isEqualTo(10 - sales);
    assertThat(sales).isEqualTo(2);
  }
}
