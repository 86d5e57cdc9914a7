package io.locksmith.tck;

import io.locksmith.LockClient;
import io.locksmith.StaleTokenException;
import io.locksmith.recipes.Sale;
import io.locksmith.recipes.SegmentedStock;
import io.locksmith.recipes.StockStore;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A seller in a child JVM for {@link StockStoreTck}. Arguments: the {@link Fixture} class, its argument,
 * mode, item, segments, then per mode:
 *
 * <ul>
 *   <li>{@code sell <threads>}: prints {@code READY}, waits for a line on stdin, then sells 1–3 units at a time (1 once a sale found too few) until sold out,
 *       then prints {@code SOLD <units> <sales> <stale>};
 *   <li>{@code pause}: sells 1 unit with a 1 s watched lease, but after reading a segment prints {@code READ <segment> <units>} and
 *       waits for a line on stdin before writing (the parent stops the process meanwhile); then prints
 *       {@code SOLD} or {@code STALE <token> <fence>}.
 * </ul>
 */
public final class StockSellerProcess {
  /**
   * How long a seller of the several-JVM test waits for a segment's lock: the test counts units sold, not
   * waits, and a polling backend under a parallel build once kept a seller past the default 5 s.
   */
  static final java.time.Duration SELL_LOCK_WAIT = java.time.Duration.ofSeconds(30);

  private StockSellerProcess() {}

  /**
   * What a child JVM builds from its one argument: the lock client and the store, as the test's own.
   * Implementations are public, with a public constructor taking that argument (a backend's test module
   * writes one of ~20 lines); {@link #close()} closes what the constructor opened.
   */
  public interface Fixture extends AutoCloseable {
    /** @return the lock client */
    LockClient lockClient();

    /** @return the stock store */
    StockStore store();

    @Override
    void close();
  }

  /**
   * @param args fixture class, fixture argument, mode, item, segments[, threads]
   * @throws Exception if the fixture cannot be built or a sale fails unexpectedly
   */
  public static void main(String[] args) throws Exception {
    String mode = args[2];
    try (Fixture fixture = (Fixture) Class.forName(args[0]).getConstructor(String.class).newInstance(args[1])) {
      LockClient locks = fixture.lockClient();
      StockStore store = fixture.store();
      String item = args[3];
      int segments = Integer.parseInt(args[4]);
      if (mode.equals("sell")) {
        SegmentedStock stock = SegmentedStock.builder(locks, store, item).segments(segments)
            .lockWait(SELL_LOCK_WAIT).build();
        System.out.println("READY"); // then wait for the parent's start signal, so that all start together
        System.out.flush();
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
        sell(stock, Integer.parseInt(args[5]));
      } else {
        pause(locks, store, item, segments);
      }
    }
  }

  private static void sell(SegmentedStock stock, int threads) throws InterruptedException {
    AtomicLong units = new AtomicLong();
    AtomicLong sales = new AtomicLong();
    AtomicLong stale = new AtomicLong();
    List<Thread> sellers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      sellers.add(new Thread(() -> {
        long q = 1 + ThreadLocalRandom.current().nextInt(3);
        while (true) {
          Sale sale;
          try {
            sale = stock.trySell(q);
          } catch (StaleTokenException e) {
            stale.incrementAndGet(); // nothing sold; try again
            continue;
          }
          if (sale.sold()) {
            units.addAndGet(q);
            sales.incrementAndGet();
          } else if (sale.status() == Sale.Status.INSUFFICIENT) {
            q = 1;
          } else {
            return;
          }
        }
      }));
    }
    sellers.forEach(Thread::start);
    for (Thread t : sellers) {
      t.join();
    }
    System.out.println("SOLD " + units.get() + " " + sales.get() + " " + stale.get());
    System.out.flush();
  }

  private static void pause(LockClient locks, StockStore store, String item, int segments) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    StockStore pausing = new StockStore() {
      @Override
      public int create(String i, int n) {
        return store.create(i, n);
      }

      @Override
      public long read(String i, int segment, long token) {
        long units = store.read(i, segment, token);
        System.out.println("READ " + segment + " " + units);
        System.out.flush();
        try {
          in.readLine(); // the parent stops this process here, then lets it go on
        } catch (java.io.IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
        return units;
      }

      @Override
      public void write(String i, List<SegmentWrite> writes) {
        store.write(i, writes);
      }

      @Override
      public long[] units(String i) {
        return store.units(i);
      }
    };
    // a short watched lease: while the parent keeps this process stopped, nothing renews it
    SegmentedStock stock = SegmentedStock.builder(locks, pausing, item).segments(segments)
        .lockOptions(io.locksmith.LockOptions.watched(java.time.Duration.ofSeconds(1))).build();
    try {
      Sale sale = stock.trySell(1);
      System.out.println(sale.sold() ? "SOLD" : sale.status().toString());
    } catch (StaleTokenException e) {
      System.out.println("STALE " + e.token() + " " + e.highestSeen());
    }
    System.out.flush();
  }
}
