package io.locksmith.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.HdrHistogram.Recorder;

/**
 * Runs one scenario's threads against one implementation for a bounded window and accumulates what it
 * saw. Not thread-safe itself: one workload per implementation, driven by one thread of the harness.
 */
final class Workload {
  private static final long HIGHEST_NANOS = 60_000_000_000L;
  /** How long after the window a waiting thread may still finish its cycle. */
  private static final long GRACE_NANOS = 2_000_000_000L;

  private final Scenario scenario;
  private final int threads;
  /** 0, or how many cycles every thread completes in each window before it closes (smoke runs). */
  private final int minCycles;
  /** rw-mix: threads {@code 0 .. readers-1} only read, the others only write; 0 otherwise. */
  final int readers;
  /** Cycle latency: acquire (including any wait) plus release. */
  final org.HdrHistogram.Histogram cycles = new org.HdrHistogram.Histogram(HIGHEST_NANOS, 3);
  /** Acquire alone (including any wait). */
  final org.HdrHistogram.Histogram acquires = new org.HdrHistogram.Histogram(HIGHEST_NANOS, 3);
  /** rw-mix: the read side's acquires alone (including any wait), and the write side's. */
  final org.HdrHistogram.Histogram readAcquires = new org.HdrHistogram.Histogram(HIGHEST_NANOS, 3);
  final org.HdrHistogram.Histogram writeAcquires = new org.HdrHistogram.Histogram(HIGHEST_NANOS, 3);
  /** From the start of a release to the grant of a thread that was already waiting. */
  final org.HdrHistogram.Histogram handoffs = new org.HdrHistogram.Histogram(HIGHEST_NANOS, 3);
  final long[] perThread;
  long ops;
  /** Threads that were still waiting at the end of a window plus the grace period. */
  long timeouts;
  long measuredNanos;

  /**
   * @param readers for rw-mix, how many of the threads read (the others write); ignored otherwise
   * @param minCycles 0, or the cycles every thread completes in each window: the window stays open past its
   *     time until each thread has, or gave up waiting ({@link BenchSettings#minCycles()})
   */
  Workload(Scenario scenario, int threads, int readers, int minCycles) {
    this.scenario = scenario;
    this.threads = threads;
    this.minCycles = minCycles;
    this.readers = scenario == Scenario.RW_MIX ? readers : 0;
    this.perThread = new long[threads];
  }

  /** The name thread {@code t} locks in its {@code i}-th cycle. */
  private String lockName(int t, long i) {
    return switch (scenario) {
      case UNCONTENDED, REDLOCK -> "u-" + (i & 1023);
      case MANY_KEYS -> "m-" + t + "-" + (i & 15);
      case HOT_KEY, HERD -> "hot";
      case RW_MIX -> "rw-mix";
      case SEGMENTED -> "stock"; // a sale picks its segments itself
    };
  }

  /**
   * Runs every thread until {@code windowNanos} pass (with {@code minCycles}, and until every thread has
   * completed that many cycles in the window or given up waiting); cycles that finish after the window
   * are not counted (threads still waiting then finish their cycle and stop).
   *
   * @param record whether to keep what is seen (false for warm-up)
   * @return cycles completed, counting those that finished after the window too
   */
  long run(LockImpl impl, long windowNanos, boolean record) throws Exception {
    Recorder cycleRecorder = new Recorder(HIGHEST_NANOS, 3);
    Recorder handoffRecorder = new Recorder(HIGHEST_NANOS, 3);
    Recorder acquireRecorder = new Recorder(HIGHEST_NANOS, 3);
    Recorder readAcquireRecorder = new Recorder(HIGHEST_NANOS, 3);
    Recorder writeAcquireRecorder = new Recorder(HIGHEST_NANOS, 3);
    AtomicLong lastReleaseStart = new AtomicLong(Long.MIN_VALUE); // MIN_VALUE: no release yet
    AtomicLong done = new AtomicLong();
    AtomicLong all = new AtomicLong();
    AtomicLong gaveUp = new AtomicLong();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    long[] counts = new long[threads];
    CountDownLatch ready = new CountDownLatch(threads);
    CountDownLatch go = new CountDownLatch(1);
    long[] window = new long[2];
    // threads yet to complete minCycles counted cycles (or give up); the window closes when none is left
    java.util.concurrent.atomic.AtomicInteger pending = new java.util.concurrent.atomic.AtomicInteger(
        minCycles > 0 ? threads : 0);
    AtomicLong closed = new AtomicLong(); // when pending reached 0, if it did
    Runnable done1 = () -> {
      if (pending.decrementAndGet() == 0) {
        closed.set(System.nanoTime());
      }
    };
    boolean oneName = scenario == Scenario.HOT_KEY || scenario == Scenario.HERD;
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int id = t;
      boolean reads = t < readers;
      Thread worker = new Thread(() -> {
        ready.countDown();
        boolean owed = minCycles > 0; // this thread still counts towards pending
        try {
          go.await();
          long end = window[1];
          for (long i = 0; ; i++) {
            long start = System.nanoTime();
            if (start - end >= 0 && pending.get() == 0) {
              return;
            }
            // threads still waiting when the window closes get a grace period, then give up
            long until = (start - end >= 0 ? start : end) + GRACE_NANOS;
            LockImpl.Held held = reads ? impl.acquireShared(lockName(id, i), until - start)
                : impl.acquire(lockName(id, i), until - start);
            if (held == null) {
              gaveUp.incrementAndGet();
              return;
            }
            long granted = System.nanoTime();
            long released = lastReleaseStart.get();
            long releaseStart = System.nanoTime();
            lastReleaseStart.set(releaseStart);
            held.release();
            long finished = System.nanoTime();
            all.incrementAndGet();
            if (finished - end < 0 || pending.get() > 0) {
              cycleRecorder.recordValue(Math.min(finished - start, HIGHEST_NANOS));
              acquireRecorder.recordValue(Math.min(granted - start, HIGHEST_NANOS));
              if (scenario == Scenario.RW_MIX) {
                (reads ? readAcquireRecorder : writeAcquireRecorder).recordValue(Math.min(granted - start,
                    HIGHEST_NANOS));
              }
              // one name: the latest release began while this thread waited, so it handed the lock over
              if (oneName && released != Long.MIN_VALUE && released - start > 0
                  && granted - released >= 0) {
                handoffRecorder.recordValue(Math.min(granted - released, HIGHEST_NANOS));
              }
              counts[id]++;
              done.incrementAndGet();
              if (owed && counts[id] >= minCycles) {
                owed = false;
                done1.run();
              }
            }
          }
        } catch (Throwable e) {
          failure.compareAndSet(null, e);
        } finally {
          if (owed) { // gave up or failed: the others need not wait for it
            done1.run();
          }
        }
      }, "bench-" + impl.name() + "-" + t);
      worker.setDaemon(true);
      workers.add(worker);
      worker.start();
    }
    ready.await();
    window[0] = System.nanoTime();
    window[1] = window[0] + windowNanos;
    go.countDown();
    for (Thread w : workers) {
      w.join();
    }
    if (failure.get() != null) {
      throw new IllegalStateException(impl.name() + " failed during " + scenario.cliName() + ": "
          + failure.get(), failure.get());
    }
    if (record) {
      cycles.add(cycleRecorder.getIntervalHistogram());
      handoffs.add(handoffRecorder.getIntervalHistogram());
      acquires.add(acquireRecorder.getIntervalHistogram());
      readAcquires.add(readAcquireRecorder.getIntervalHistogram());
      writeAcquires.add(writeAcquireRecorder.getIntervalHistogram());
      for (int t = 0; t < threads; t++) {
        perThread[t] += counts[t];
      }
      ops += done.get();
      timeouts += gaveUp.get();
      measuredNanos += Math.max(windowNanos, closed.get() == 0 ? 0 : closed.get() - window[0]);
    }
    return all.get();
  }
}
