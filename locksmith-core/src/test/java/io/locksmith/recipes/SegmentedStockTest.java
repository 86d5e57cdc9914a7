package io.locksmith.recipes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.ClientOptions;
import io.locksmith.DegradationPolicy;
import io.locksmith.LockClient;
import io.locksmith.LockOptions;
import io.locksmith.NoFencingTokenException;
import io.locksmith.StaleTokenException;
import io.locksmith.injvm.InJvmLockServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link SegmentedStock} over the in-JVM lock server and {@link InMemoryStockStore}. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SegmentedStockTest {
  private final InJvmLockServer server = new InJvmLockServer();
  private final InMemoryStockStore store = new InMemoryStockStore();
  private final List<LockClient> clients = new ArrayList<>();

  @AfterEach
  void close() {
    clients.forEach(LockClient::close);
  }

  private LockClient client() {
    LockClient c = server.newClient(ClientOptions.builder().namespace("stock-test").build());
    clients.add(c);
    return c;
  }

  private SegmentedStock stock(LockClient client, String item, int segments) {
    return SegmentedStock.builder(client, store, item).segments(segments).build();
  }

  @Test
  void aSaleTakesFromOneSegmentWhenItHasEnough() {
    SegmentedStock stock = stock(client(), "one", 4);
    stock.refill(40);
    assertThat(stock.units()).containsExactly(10, 10, 10, 10);
    Sale sale = stock.trySell(3);
    assertThat(sale.status()).isEqualTo(Sale.Status.SOLD);
    assertThat(sale.sold()).isTrue();
    assertThat(sale.taken()).hasSize(1).containsValue(3L);
    assertThat(stock.total()).isEqualTo(37);
  }

  @Test
  void aShortSegmentIsLeftForTheNextAndASaleSpansSegmentsWhenNoneHasEnough() {
    SegmentedStock stock = stock(client(), "thin", 5);
    stock.refill(5); // one unit per segment
    Sale two = stock.trySell(2);
    assertThat(two.status()).isEqualTo(Sale.Status.SOLD);
    assertThat(two.taken()).hasSize(2).allSatisfy((segment, units) -> assertThat(units).isEqualTo(1L));
    assertThat(stock.total()).isEqualTo(3);
    Sale five = stock.trySell(5);
    assertThat(five.status()).isEqualTo(Sale.Status.INSUFFICIENT);
    assertThat(five.available()).isEqualTo(3);
    assertThat(stock.total()).as("nothing sold by an insufficient sale").isEqualTo(3);
    assertThat(stock.trySell(3).taken().values().stream().mapToLong(Long::longValue).sum()).isEqualTo(3);
    Sale none = stock.trySell(1);
    assertThat(none.status()).isEqualTo(Sale.Status.SOLD_OUT);
    assertThat(none.sold()).isFalse();
  }

  @Test
  void refillAndRebalanceSpreadUnitsEvenly() {
    SegmentedStock stock = stock(client(), "spread", 3);
    stock.refill(10);
    assertThat(stock.units()).containsExactly(4, 3, 3);
    for (int i = 0; i < 4; i++) {
      stock.trySell(2);
    }
    assertThat(stock.total()).isEqualTo(2);
    stock.rebalance();
    assertThat(stock.units()).containsExactly(1, 1, 0);
    stock.refill(1);
    assertThat(stock.units()).containsExactly(2, 1, 0);
  }

  /**
   * Stock spread thinly (20 units over 20 segments) and sellers in two clients asking 1 or 2 units: every
   * unit is sold, none twice, and every seller ends with a clear sold-out.
   */
  @Test
  void concurrentSellersSellThinStockCompletelyAndNeverOversell() throws Exception {
    LockClient a = client();
    LockClient b = client();
    stock(a, "hot", 20).refill(20);
    AtomicLong sold = new AtomicLong();
    AtomicLong soldOut = new AtomicLong();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    List<Thread> sellers = new ArrayList<>();
    for (int t = 0; t < 8; t++) {
      SegmentedStock stock = stock(t % 2 == 0 ? a : b, "hot", 20);
      sellers.add(new Thread(() -> {
        try {
          long q = 1 + ThreadLocalRandom.current().nextInt(2);
          while (true) {
            Sale sale = stock.trySell(q);
            if (sale.sold()) {
              sold.addAndGet(q);
            } else if (sale.status() == Sale.Status.INSUFFICIENT) {
              q = 1;
            } else {
              soldOut.incrementAndGet();
              return;
            }
          }
        } catch (Throwable e) {
          failure.compareAndSet(null, e);
        }
      }));
    }
    sellers.forEach(Thread::start);
    for (Thread t : sellers) {
      t.join(30_000);
    }
    assertThat(failure.get()).isNull();
    assertThat(sold.get()).as("every unit sold exactly once").isEqualTo(20);
    assertThat(store.units("hot")).containsOnly(0);
    assertThat(soldOut.get()).isEqualTo(8);
  }

  /**
   * A seller paused between its read and its write, past its (fixed) lease: another seller is granted the
   * segment and sells from it; when the paused one resumes, its write is refused and nothing of its sale
   * happens, so no update is lost. The control shows the same interleaving without the fence on the
   * paused write loses the other seller's sale.
   */
  @Test
  void aPausedSellersWriteIsRefusedAndNoUpdateIsLost() throws Exception {
    assertThat(lostUpdatesWithAPausedSeller(true)).as("lost updates with the fence").isZero();
    assertThat(lostUpdatesWithAPausedSeller(false))
        .as("control: the same interleaving without the fence on the paused write loses a sale").isEqualTo(1);
  }

  /** @return units left minus what the sales that reported SOLD should have left: the lost updates */
  private long lostUpdatesWithAPausedSeller(boolean fenced) throws Exception {
    String item = "paused-" + fenced;
    LockOptions shortFixed = LockOptions.fixed(Duration.ofMillis(200));
    CountDownLatch readDone = new CountDownLatch(1);
    CountDownLatch resume = new CountDownLatch(1);
    AtomicReference<Thread> paused = new AtomicReference<>();
    StockStore pausing = new StockStore() {
      @Override
      public int create(String i, int segments) {
        return store.create(i, segments);
      }

      @Override
      public long read(String i, int segment, long token) {
        long units = store.read(i, segment, token);
        if (Thread.currentThread() == paused.get()) {
          readDone.countDown();
          try {
            resume.await(); // the pause: GC, SIGSTOP, a slow disk ...
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
        return units;
      }

      @Override
      public void write(String i, List<SegmentWrite> writes) {
        if (!fenced && Thread.currentThread() == paused.get()) {
          // the control: the paused seller's write bypasses the fence (a huge token always passes)
          List<SegmentWrite> unfenced = writes.stream()
              .map(w -> new SegmentWrite(w.segment(), Long.MAX_VALUE, w.units())).toList();
          store.write(i, unfenced);
          return;
        }
        store.write(i, writes);
      }

      @Override
      public long[] units(String i) {
        return store.units(i);
      }
    };
    LockClient a = client();
    LockClient b = client();
    SegmentedStock sellerA = SegmentedStock.builder(a, pausing, item).segments(1).lockOptions(shortFixed).build();
    SegmentedStock sellerB = SegmentedStock.builder(b, store, item).segments(1).lockOptions(shortFixed).build();
    sellerA.refill(10);
    CompletableFuture<Sale> first = new CompletableFuture<>();
    Thread t = new Thread(() -> {
      try {
        first.complete(sellerA.trySell(1));
      } catch (Throwable e) {
        first.completeExceptionally(e);
      }
    });
    paused.set(t);
    t.start();
    assertThat(readDone.await(10, TimeUnit.SECONDS)).isTrue();
    // A's lease runs out while it is paused; B waits for it and sells
    assertThat(sellerB.trySell(1).sold()).isTrue();
    long sold = 1;
    resume.countDown();
    if (fenced) {
      assertThatThrownBy(() -> first.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(StaleTokenException.class);
    } else {
      assertThat(first.get(10, TimeUnit.SECONDS).sold()).as("the unfenced write went through").isTrue();
      sold++;
    }
    return store.units(item)[0] - (10 - sold);
  }

  @Test
  void badInputAndUnsafeOptionsAreRefused() {
    LockClient a = client();
    assertThatThrownBy(() -> SegmentedStock.builder(a, store, "x").segments(0).build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> SegmentedStock.builder(a, store, "x").segments(SegmentedStock.MAX_SEGMENTS + 1)
        .build()).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> SegmentedStock.builder(a, store, "x").lockOptions(LockOptions.builder()
        .degradation(DegradationPolicy.localFallback()).build()).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("fail closed");
    stock(a, "five", 5);
    assertThatThrownBy(() -> stock(a, "five", 4)).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("5 segments");
    SegmentedStock ok = stock(a, "ok", 2);
    assertThatThrownBy(() -> ok.trySell(0)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ok.refill(0)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> store.read("ok", 0, 0)).isInstanceOf(NoFencingTokenException.class);
    assertThatThrownBy(() -> store.read("ok", 2, 1)).isInstanceOf(IllegalArgumentException.class);
    assertThat(LongStream.of(store.units("absent")).count()).isZero();
  }
}
