package io.locksmith.tck;

import static io.locksmith.tck.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.DistributedLock;
import io.locksmith.DistributedReadWriteLock;
import io.locksmith.Lease;
import io.locksmith.LeaseLostException;
import io.locksmith.LeaseState;
import io.locksmith.LockClient;
import io.locksmith.LockInfo;
import io.locksmith.LockOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The read-write lock contract. The whole {@link LockClientTck} runs on the write side (an exclusive
 * lock in its own right), and the cases here check how the two sides relate: shared readers, readers
 * and writers excluding each other, writer preference, phase-fair admission, downgrade, refused upgrade, read leases under
 * renewal and expiry, tokens, inspection and force-unlock of the read side.
 *
 * <pre>{@code
 * class RedisWriteLockTckTest extends WriteLockTck {
 *   @RegisterExtension static final RedisServerExtension REDIS = new RedisServerExtension();
 *   @Override protected LockClient newClient() { return RedisLockClient.create(REDIS.server().uri()); }
 * }
 * }</pre>
 */
public abstract class WriteLockTck extends LockClientTck {

  @Override
  protected DistributedLock lockUnderTest(LockClient client, String name, LockOptions options) {
    return client.readWriteLock(name, options).writeLock();
  }

  /** @return the read-write lock under test with the client's default lease policy */
  protected final DistributedReadWriteLock rw(LockClient client) {
    return client.readWriteLock(name());
  }

  /** @return the read-write lock under test */
  protected final DistributedReadWriteLock rw(LockClient client, LockOptions options) {
    return client.readWriteLock(name(), options);
  }

  /** Waits until a new reader is refused, i.e. a waiting writer has registered; holds nothing after. */
  private boolean readersAreKeptOut(LockClient client) throws InterruptedException {
    return eventually(Duration.ofSeconds(5), () -> {
      Optional<Lease> l = rw(client).readLock().tryAcquire();
      l.ifPresent(Lease::release);
      return l.isEmpty();
    });
  }

  // ------------------------------------------------------------------ sharing and exclusion

  @Test
  void manyReadersHoldAtOnceAcrossTwoClientsAndKeepTheWriterOut() throws Exception {
    LockClient a = client();
    LockClient b = client();
    List<Lease> readers = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      readers.add(rw(i % 2 == 0 ? a : b).readLock().tryAcquire().orElseThrow());
    }
    AtomicReference<Throwable> failure = new AtomicReference<>();
    CountDownLatch threadsHold = new CountDownLatch(2);
    CountDownLatch done = new CountDownLatch(1);
    List<Thread> threads = new ArrayList<>();
    for (LockClient c : List.of(a, b)) {
      Thread t = new Thread(() -> {
        DistributedLock read = rw(c).readLock();
        try {
          read.lock();
          try {
            threadsHold.countDown();
            done.await();
          } finally {
            read.unlock();
          }
        } catch (Throwable e) {
          failure.compareAndSet(null, e);
        }
      }, "tck-reader-" + threads.size());
      threads.add(t);
      t.start();
    }
    assertThat(threadsHold.await(10, TimeUnit.SECONDS)).as("Lock-view readers entered too").isTrue();
    assertThat(rw(a).readLock().inspect()).hasValueSatisfying(info ->
        assertThat(info.holdCount()).as("read holds").isEqualTo(8));
    assertThat(rw(b).writeLock().tryAcquire()).as("writer while readers hold").isEmpty();
    assertThat(rw(b).inspectWriter()).isEmpty();
    done.countDown();
    for (Thread t : threads) {
      t.join(10_000);
    }
    assertThat(failure.get()).isNull();
    readers.forEach(Lease::release);
    assertThat(rw(a).readLock().inspect()).isEmpty();
    try (Lease writer = rw(b).writeLock().tryAcquire().orElseThrow()) {
      assertThat(rw(a).readLock().tryAcquire()).as("reader while a writer holds").isEmpty();
      assertThat(rw(a).inspectWriter()).hasValueSatisfying(info ->
          assertThat(info.fencingToken()).isEqualTo(writer.fencingToken()));
    }
  }

  @Test
  void aReaderWaitsForTheWriterAndTheWriterForTheReader() throws Exception {
    LockClient a = client();
    LockClient b = client();
    LockOptions longLease = LockOptions.watched(Duration.ofSeconds(30));
    Lease writer = rw(a, longLease).writeLock().acquire();
    CompletableFuture<Lease> reader = rw(b).readLock().acquireAsync(Duration.ofSeconds(20)).toCompletableFuture();
    assertThat(rw(b).readLock().tryAcquire(Duration.ofMillis(100))).isEmpty();
    assertThat(reader).isNotDone();
    writer.release();
    // far less than the 30 s lease: the reader was woken by the release
    Lease read = reader.get(5, TimeUnit.SECONDS);
    assertThat(read.fencingToken()).as("a read carries the latest write's token").isEqualTo(writer.fencingToken());

    Lease longRead = rw(a, longLease).readLock().acquire();
    read.release();
    CompletableFuture<Lease> nextWriter = rw(b).writeLock().acquireAsync(Duration.ofSeconds(20)).toCompletableFuture();
    assertThat(rw(b).writeLock().tryAcquire(Duration.ofMillis(100))).isEmpty();
    assertThat(nextWriter).isNotDone();
    longRead.release();
    Lease write = nextWriter.get(5, TimeUnit.SECONDS);
    assertThat(write.fencingToken()).isGreaterThan(writer.fencingToken());
    write.release();
  }

  @Test
  void aWaitingWriterKeepsNewReadersOutButHoldersMayReenter() throws Exception {
    LockClient a = client();
    LockClient b = client();
    LockClient c = client();
    DistributedLock holderRead = rw(a).readLock();
    holderRead.lock();
    CompletableFuture<Lease> writer = rw(b).writeLock().acquireAsync(Duration.ofSeconds(20)).toCompletableFuture();
    assertThat(readersAreKeptOut(c)).as("a new reader is refused once a writer waits").isTrue();
    assertThat(rw(c).readLock().tryAcquire(Duration.ofMillis(200))).isEmpty();
    CompletableFuture<Lease> lateReader = rw(c).readLock().acquireAsync(Duration.ofSeconds(20)).toCompletableFuture();

    assertThat(holderRead.tryLock()).as("a holder re-enters even though a writer waits").isTrue();
    assertThat(holderRead.getHoldCount()).isEqualTo(2);
    holderRead.unlock();
    assertThat(writer).isNotDone();
    holderRead.unlock();

    Lease write = writer.get(5, TimeUnit.SECONDS);
    assertThat(lateReader).as("the late reader waits for the writer").isNotDone();
    write.release();
    Lease read = lateReader.get(5, TimeUnit.SECONDS);
    assertThat(read.fencingToken()).isEqualTo(write.fencingToken());
    read.release();
  }

  @Test
  void aWriterThatGivesUpLetsWaitingReadersIn() throws Exception {
    LockClient a = client();
    LockClient b = client();
    LockClient c = client();
    // the window is the writer's wait: it must be seen keeping a new reader out, and that reader seen
    // waiting, before it runs out. 500 ms is ample on a quiet machine; a slower test retries longer
    withGrowingWindow(Duration.ofMillis(500), 4, wait -> {
      Lease held = rw(a, LockOptions.watched(Duration.ofSeconds(30))).readLock().acquire();
      CompletableFuture<Optional<Lease>> writer = rw(b).writeLock().tryAcquireAsync(wait).toCompletableFuture();
      boolean[] refused = new boolean[1];
      assertThat(eventually(Duration.ofSeconds(10), () -> {
        Optional<Lease> l = rw(c).readLock().tryAcquire();
        l.ifPresent(Lease::release);
        refused[0] = l.isEmpty();
        return refused[0] || writer.isDone();
      })).isTrue();
      if (!refused[0]) {
        held.release();
        throw windowMissed("a new reader was refused only after the writer's wait ran out");
      }
      CompletableFuture<Lease> reader = rw(c).readLock().acquireAsync(Duration.ofSeconds(20)).toCompletableFuture();
      boolean[] bothWait = new boolean[1];
      assertThat(eventually(Duration.ofSeconds(10), () -> {
        bothWait[0] = waiters(a) == 2;
        return bothWait[0] || writer.isDone();
      })).isTrue();
      if (!bothWait[0]) {
        held.release();
        reader.thenAccept(Lease::release);
        throw windowMissed("the reader was seen waiting only after the writer's wait ran out");
      }
      assertThat(writer.get(10, TimeUnit.SECONDS)).as("the writer's wait ran out").isEmpty();
      // the readers kept out by the writer are let in when it leaves, not when their backstop runs out:
      // 3 s is far below the reader's 20 s wait
      Lease read = reader.get(3, TimeUnit.SECONDS);
      read.release();
      held.release();
    });
  }

  /** Waiting writers + waiting readers, as the side that holds reports them; -1 if nobody holds. */
  private int waiters(LockClient client) {
    Optional<LockInfo> writer = rw(client).writeLock().inspect();
    Optional<LockInfo> info = writer.isPresent() ? writer : rw(client).readLock().inspect();
    return info.map(LockInfo::waiters).orElse(-1);
  }

  // ------------------------------------------------------------------ phase-fair admission

  /**
   * Phase-fair admission (issue 12 item 5): the readers that wait when a writer releases enter as one
   * batch before the writer that waited with them; a reader that arrives while that writer waits (and
   * no writer holds) queues behind it. Writer preference used to let the waiting writer in first.
   */
  @Test
  void readersWaitingAtAWritersReleaseEnterBeforeTheNextWriter() throws Exception {
    LockClient writers = client();
    LockClient readers = client();
    Lease first = rw(writers, LockOptions.watched(Duration.ofSeconds(30))).writeLock().acquire();
    List<CompletableFuture<Lease>> batch = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      batch.add(rw(readers).readLock().acquireAsync(Duration.ofSeconds(20)).toCompletableFuture());
    }
    assertThat(eventually(Duration.ofSeconds(5), () -> waiters(writers) == 3)).as("3 readers wait").isTrue();
    CompletableFuture<Lease> next = rw(writers).writeLock().acquireAsync(Duration.ofSeconds(20)).toCompletableFuture();
    assertThat(eventually(Duration.ofSeconds(5), () -> waiters(writers) == 4)).as("and a writer").isTrue();

    first.release();
    CompletableFuture<Void> batchIn = CompletableFuture.allOf(batch.toArray(new CompletableFuture<?>[0]));
    CompletableFuture.anyOf(batchIn, next).get(10, TimeUnit.SECONDS);
    assertThat(batchIn.isDone())
        .as("the readers waiting at the release entered before the writer that waited with them "
            + "(that writer was granted first: %s)", next.isDone())
        .isTrue();
    assertThat(next).as("no writer beside the readers").isNotDone();
    for (CompletableFuture<Lease> read : batch) {
      assertThat(read.join().fencingToken()).as("the batch saw the released write").isEqualTo(first.fencingToken());
    }

    // the read phase is on and a writer waits: a new reader is refused and queues behind that writer
    assertThat(rw(readers).readLock().tryAcquire()).as("a new reader while a writer waits").isEmpty();
    CompletableFuture<Lease> late = rw(readers).readLock().acquireAsync(Duration.ofSeconds(20)).toCompletableFuture();
    assertThat(eventually(Duration.ofSeconds(5), () -> waiters(readers) == 2)).as("the late reader waits").isTrue();
    batch.forEach(read -> read.join().release());
    Lease second = next.get(5, TimeUnit.SECONDS);
    assertThat(late).as("the late reader waits for the writer it queued behind").isNotDone();
    second.release();
    Lease lateRead = late.get(5, TimeUnit.SECONDS);
    assertThat(lateRead.fencingToken()).isEqualTo(second.fencingToken());
    lateRead.release();
  }

  /**
   * The same when a write phase ends without a release, the writer's lease running out: the readers that
   * waited for it still enter before the writer that waited with them.
   */
  @Test
  void readersWaitingWhenAWriteLeaseRunsOutEnterBeforeTheNextWriter() throws Exception {
    LockClient writers = client();
    LockClient readers = client();
    // the window is the first writer's fixed lease: two readers and a writer must be seen waiting before
    // it runs out. 500 ms is ample on a quiet machine; a slower test retries with a longer lease
    withGrowingWindow(Duration.ofMillis(500), 4, leaseTime -> {
      Lease first = rw(writers, LockOptions.fixed(leaseTime)).writeLock().acquire();
      long grantedBy = System.nanoTime();
      List<CompletableFuture<Lease>> batch = new ArrayList<>();
      for (int i = 0; i < 2; i++) {
        batch.add(rw(readers).readLock().acquireAsync(Duration.ofSeconds(20)).toCompletableFuture());
      }
      CompletableFuture<Lease> next = rw(writers).writeLock().acquireAsync(Duration.ofSeconds(20)).toCompletableFuture();
      // 3 waiters as the write side reports them: the first writer still holds. Once its lease ran out
      // (not before grantedBy + leaseTime) they cannot be seen so any more
      boolean[] seen = new boolean[1];
      assertThat(eventually(Duration.ofSeconds(10), () -> {
        seen[0] = waiters(writers) == 3;
        return seen[0] || System.nanoTime() - grantedBy > leaseTime.toNanos();
      })).isTrue();
      if (!seen[0]) {
        batch.forEach(read -> read.thenAccept(Lease::release));
        next.thenAccept(Lease::release);
        throw windowMissed("2 readers and a writer were not seen waiting before the first write lease ran out");
      }

      CompletableFuture<Void> batchIn = CompletableFuture.allOf(batch.toArray(new CompletableFuture<?>[0]));
      CompletableFuture.anyOf(batchIn, next).get(15, TimeUnit.SECONDS);
      assertThat(batchIn.isDone()).as("the readers entered first (the writer was granted first: %s)", next.isDone())
          .isTrue();
      assertThat(next).isNotDone();
      assertThat(first.release()).as("the first write lease ran out").isFalse();
      batch.forEach(read -> read.join().release());
      next.get(5, TimeUnit.SECONDS).release();
    });
  }

  /**
   * Issue 12 item 5: under a steady stream of writers from one client, readers of another client were
   * never admitted, or only after thousands of writes (writer preference kept them out for as long as
   * a writer waited). Every read must be granted within its wait after a few writes, and the writers
   * must keep going meanwhile.
   */
  @Test
  void readersAreNotStarvedByAStreamOfWriters() throws Exception {
    LockClient writerClient = client();
    LockClient readerClient = client();
    AtomicBoolean stop = new AtomicBoolean();
    AtomicLong writes = new AtomicLong();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    CountDownLatch streaming = new CountDownLatch(20);
    List<Thread> writerThreads = new ArrayList<>();
    for (int t = 0; t < 3; t++) {
      writerThreads.add(new Thread(() -> {
        try {
          while (!stop.get()) {
            Optional<Lease> write = rw(writerClient).writeLock().tryAcquire(Duration.ofSeconds(10));
            if (write.isEmpty()) {
              failure.compareAndSet(null, new AssertionError("a writer waited 10 s in vain"));
              return;
            }
            writes.incrementAndGet();
            streaming.countDown();
            write.get().release();
          }
        } catch (Throwable e) {
          failure.compareAndSet(null, e);
        }
      }, "tck-stream-writer-" + t));
    }
    writerThreads.forEach(Thread::start);
    int readerThreads = 3;
    int readsEach = 5;
    AtomicInteger reads = new AtomicInteger();
    AtomicLong mostWritesWhileWaiting = new AtomicLong();
    long writesDuringReads;
    try {
      assertThat(streaming.await(10, TimeUnit.SECONDS)).as("the writers stream").isTrue();
      long writesBefore = writes.get();
      List<Thread> readersList = new ArrayList<>();
      for (int t = 0; t < readerThreads; t++) {
        readersList.add(new Thread(() -> {
          try {
            for (int i = 0; i < readsEach; i++) {
              long before = writes.get();
              Optional<Lease> read = rw(readerClient).readLock().tryAcquire(Duration.ofSeconds(3));
              long passed = writes.get() - before; // no write is granted while this read holds
              if (read.isEmpty()) {
                failure.compareAndSet(null, new AssertionError("a reader waited 3 s in vain while " + passed
                    + " writes were granted"));
                return;
              }
              mostWritesWhileWaiting.accumulateAndGet(passed, Math::max);
              reads.incrementAndGet();
              read.get().release();
            }
          } catch (Throwable e) {
            failure.compareAndSet(null, e);
          }
        }, "tck-stream-reader-" + t));
      }
      readersList.forEach(Thread::start);
      for (Thread t : readersList) {
        t.join(30_000);
      }
      writesDuringReads = writes.get() - writesBefore;
    } finally {
      stop.set(true);
      for (Thread t : writerThreads) {
        t.join(30_000);
      }
    }
    assertThat(failure.get()).isNull();
    assertThat(reads.get()).as("every read was granted").isEqualTo(readerThreads * readsEach);
    // Not starved: every read above was granted within its 3 s wait while the writers streamed (before
    // phase-fair admission none was). How many writes passed while one read waited is not asserted: a
    // reader thread descheduled before its request reaches the server lets hundreds of in-JVM writes by
    // on a loaded machine; the order itself is pinned by the two deterministic tests above.
    System.out.printf("[rw] most writes granted while one read waited: %d%n", mostWritesWhileWaiting.get());
    // each reader's next read comes while a writer waits, and queues behind it
    assertThat(writesDuringReads).as("writes while the readers read").isGreaterThanOrEqualTo(readsEach - 1);
  }

  // ------------------------------------------------------------------ downgrade and upgrade

  @Test
  void downgradeOfAWriteLeaseKeepsWritersOutAndLetsReadersIn() throws Exception {
    LockClient a = client();
    LockClient b = client();
    DistributedReadWriteLock rw = rw(a);
    Lease write = rw.writeLock().acquire();
    CompletableFuture<Lease> waitingWriter = rw(b).writeLock().acquireAsync(Duration.ofSeconds(20)).toCompletableFuture();
    assertThat(readersAreKeptOut(b)).isTrue();

    Lease read = rw.downgrade(write);
    assertThat(write.state()).isEqualTo(LeaseState.RELEASED);
    assertThat(read.isHeld()).isTrue();
    assertThat(read.fencingToken()).isEqualTo(write.fencingToken());
    assertThat(waitingWriter).as("no writer slips in at the downgrade").isNotDone();
    assertThat(rw(b).inspectWriter()).isEmpty();
    read.release();
    Lease next = waitingWriter.get(5, TimeUnit.SECONDS);
    assertThat(next.fencingToken()).isGreaterThan(write.fencingToken());
    next.release();

    Lease again = rw.writeLock().acquire();
    Lease shared = rw.downgrade(again);
    try (Lease other = rw(b).readLock().tryAcquire().orElseThrow()) {
      assertThat(other.fencingToken()).isEqualTo(again.fencingToken());
      assertThat(rw(b).writeLock().tryAcquire()).isEmpty();
    }
    shared.release();
    assertThatThrownBy(() -> rw.downgrade(shared)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> rw.downgrade(again)).isInstanceOf(LeaseLostException.class);
  }

  @Test
  void downgradeOfAWriteLeaseThatAnotherWriterFollowedFails() throws Exception {
    LockClient a = client();
    LockClient b = client();
    DistributedReadWriteLock rw = rw(a, LockOptions.watched(Duration.ofSeconds(30)));
    Lease write = rw.writeLock().acquire();
    // an operator removes the hold. A backend that tells the evicted holder makes it LOST at once; one that
    // does not leaves it HELD until its next renewal (seconds away). Either way the downgrade must fail.
    assertThat(rw(b).writeLock().forceUnlock()).isTrue();
    Lease other = rw(b).writeLock().acquire(Duration.ofSeconds(5));
    other.release();
    assertThat(write.state()).isIn(LeaseState.HELD, LeaseState.LOST);
    assertThatThrownBy(() -> rw.downgrade(write)).isInstanceOf(LeaseLostException.class);
    assertThat(write.state()).isEqualTo(LeaseState.LOST);
    // nothing is left held: the read taken for the downgrade was given back
    Lease next = rw(b).writeLock().acquire(Duration.ofSeconds(5));
    assertThat(next.fencingToken()).isGreaterThan(other.fencingToken());
    next.release();
  }

  /**
   * Regression (issue 12 item 7): {@code read.lock()} under a write hold took the read side as the
   * writer's owner without checking that it was a downgrade, so after another writer came and went it
   * was granted as a fresh read with that writer's token.
   */
  @Test
  void aLockViewDowngradeAfterAnotherWriterFails() throws Exception {
    LockClient a = client();
    LockClient b = client();
    LockOptions longLease = LockOptions.watched(Duration.ofSeconds(30));
    DistributedLock write = rw(a, longLease).writeLock();
    DistributedLock read = rw(a, longLease).readLock();
    write.lock();
    Lease writeHold = write.currentThreadLease().orElseThrow();
    // an operator removes the hold (told at once or not, as in the case above)
    assertThat(rw(b).writeLock().forceUnlock()).isTrue();
    Lease other = rw(b).writeLock().acquire(Duration.ofSeconds(5));
    other.release();
    assertThat(writeHold.state()).isIn(LeaseState.HELD, LeaseState.LOST);

    assertThatThrownBy(read::lock).isInstanceOf(LeaseLostException.class);
    assertThat(read.isHeldByCurrentThread()).isFalse();
    assertThat(writeHold.state()).isEqualTo(LeaseState.LOST);
    assertThatThrownBy(read::tryLock).as("a lost write hold has nothing to downgrade")
        .isInstanceOf(LeaseLostException.class);
    assertThatThrownBy(write::unlock).isInstanceOf(LeaseLostException.class);
    assertThat(write.isHeldByCurrentThread()).isFalse();
    // nothing is left held: the read taken for the downgrade was given back
    assertThat(eventually(Duration.ofSeconds(5), () -> rw(b).readLock().inspect().isEmpty())).isTrue();
    Lease next = rw(b).writeLock().acquire(Duration.ofSeconds(5));
    assertThat(next.fencingToken()).isGreaterThan(other.fencingToken());
    next.release();
  }

  @Test
  void downgradeInTheLockViewKeepsTheReadHold() throws Exception {
    LockClient a = client();
    LockClient b = client();
    DistributedLock write = rw(a).writeLock();
    DistributedLock read = rw(a).readLock();
    write.lock();
    long token = write.currentThreadLease().orElseThrow().fencingToken();
    read.lock();
    assertThat(read.currentThreadLease().orElseThrow().fencingToken()).isEqualTo(token);
    write.unlock();
    assertThat(read.isHeldByCurrentThread()).isTrue();
    try (Lease other = rw(b).readLock().tryAcquire().orElseThrow()) {
      assertThat(other.isHeld()).as("another reader enters after the downgrade").isTrue();
    }
    assertThat(rw(b).writeLock().tryAcquire()).as("a writer cannot").isEmpty();
    read.unlock();
    assertThat(rw(b).writeLock().tryAcquire()).as("free after the read unlock").isPresent();
  }

  @Test
  void upgradeFailsFastWithIllegalStateException() throws Exception {
    LockClient a = client();
    DistributedLock read = rw(a).readLock();
    DistributedLock write = rw(a).writeLock();
    read.lock();
    long start = System.nanoTime();
    assertThatThrownBy(write::lock).isInstanceOf(IllegalStateException.class).hasMessageContaining("upgrad");
    assertThatThrownBy(write::tryLock).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> write.tryLock(5, TimeUnit.SECONDS)).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> write.acquire(Duration.ofSeconds(5))).isInstanceOf(IllegalStateException.class);
    assertThat(System.nanoTime() - start).as("refused at once, not after a wait")
        .isLessThan(TimeUnit.SECONDS.toNanos(3));
    assertThat(read.getHoldCount()).isEqualTo(1);
    read.unlock();
    assertThat(write.tryLock()).as("after the read unlock the thread may write").isTrue();
    write.unlock();
  }

  // ------------------------------------------------------------------ read leases in time

  @Test
  void aReadLeaseKeepsWorkingUnderRenewal() throws Exception {
    LockClient a = client();
    LockClient b = client();
    Lease read = rw(a, LockOptions.watched(WATCHED_LEASE)).readLock().acquire();
    // the writer's bounded wait spans two lease times (real time: the backend's lease runs on it);
    // unrenewed, the read hold would be gone after one (renewed every third of the lease: some six times)
    assertThat(rw(b).writeLock().tryAcquire(WATCHED_LEASE.multipliedBy(2))).isEmpty();
    assertThat(read.state()).isEqualTo(LeaseState.HELD);
    assertThat(read.remainingValidity()).isPositive();
    assertThat(read.release()).isTrue();
    assertThat(rw(b).writeLock().tryAcquire()).isPresent();
  }

  @Test
  void anExpiredReadLeaseLetsTheWriterIn() throws Exception {
    LockClient a = client();
    LockClient b = client();
    Lease kept = rw(a, LockOptions.watched(Duration.ofSeconds(30))).readLock().acquire();
    // timed from before the grant: the lease cannot start earlier, and a stall after the grant would
    // otherwise be taken off the wait
    long start = System.nanoTime();
    Lease fixed = rw(a, LockOptions.fixed(SHORT_LEASE)).readLock().acquire();
    kept.release();
    Lease write = rw(b).writeLock().acquire(Duration.ofSeconds(10));
    assertThat(System.nanoTime() - start).as("taken only after the read lease ran out")
        .isGreaterThan(SHORT_LEASE.toNanos() / 2);
    assertThat(fixed.state()).isEqualTo(LeaseState.LOST);
    assertThat(fixed.release()).isFalse();
    assertThat(write.isHeld()).isTrue();
    write.release();
  }

  @Test
  void forceUnlockOfTheReadSideRemovesEveryReaderAndWakesTheWriter() throws Exception {
    LockClient a = client();
    LockClient b = client();
    LockOptions options = LockOptions.watched(Duration.ofSeconds(30));
    Lease first = rw(a, options).readLock().acquire();
    Lease second = rw(b, options).readLock().acquire();
    // a watched lease short enough for the writer's renewal to find the force-unlock at the end soon, and
    // long enough to survive until then (see WATCHED_LEASE)
    CompletableFuture<Lease> writer = rw(b, LockOptions.watched(WATCHED_LEASE)).writeLock()
        .acquireAsync(Duration.ofSeconds(20)).toCompletableFuture();
    assertThat(readersAreKeptOut(a)).isTrue();
    assertThat(rw(a).readLock().forceUnlock()).isTrue();
    Lease write = writer.get(5, TimeUnit.SECONDS);
    assertThat(first.release()).as("the reader's hold is gone").isFalse();
    assertThat(second.release()).isFalse();
    assertThat(rw(a).readLock().forceUnlock()).as("nothing left to remove").isFalse();
    assertThat(rw(a).writeLock().forceUnlock()).isTrue();
    assertThat(eventually(Duration.ofSeconds(5), () -> write.state() == LeaseState.LOST)).isTrue();
  }

  /**
   * Regression (issue 13 item 5): a force-unlock of the read side tells every evicted reader, so each
   * read lease is {@code LOST} within {@link #evictionNoticeBound()}, not at its next renewal.
   */
  @Test
  void forceUnlockOfTheReadSideTellsEveryReaderAtOnce() throws Exception {
    LockClient a = client();
    LockClient b = client();
    LockOptions longLease = LockOptions.watched(evictionCaseLease());
    List<Lease> readers = List.of(rw(a, longLease).readLock().acquire(), rw(a, longLease).readLock().acquire(),
        rw(b, longLease).readLock().acquire());
    CountDownLatch lost = new CountDownLatch(readers.size());
    readers.forEach(r -> r.onLost(lost::countDown));
    assertThat(rw(b).readLock().forceUnlock()).isTrue();
    assertThat(lost.await(evictionNoticeBound().toMillis(), TimeUnit.MILLISECONDS))
        .as("every reader LOST within %s of the force-unlock", evictionNoticeBound()).isTrue();
    for (Lease r : readers) {
      assertThat(r.state()).isEqualTo(LeaseState.LOST);
    }
  }

  @Test
  void readersAndWritersNeverOverlap() throws Exception {
    LockClient a = client();
    LockClient b = client();
    AtomicInteger readers = new AtomicInteger();
    AtomicInteger writers = new AtomicInteger();
    AtomicInteger maxReaders = new AtomicInteger();
    AtomicReference<String> violation = new AtomicReference<>();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 6; t++) {
      LockClient c = t % 2 == 0 ? a : b;
      boolean writer = t < 2;
      threads.add(new Thread(() -> {
        try {
          for (int i = 0; i < 15; i++) {
            DistributedReadWriteLock rw = rw(c);
            if (writer) {
              try (Lease lease = rw.writeLock().acquire(Duration.ofSeconds(30))) {
                if (writers.incrementAndGet() != 1 || readers.get() != 0) {
                  violation.compareAndSet(null, "a writer overlapped another holder");
                }
                Thread.yield();
                writers.decrementAndGet();
              }
            } else {
              DistributedLock read = rw.readLock();
              read.lock();
              try {
                maxReaders.accumulateAndGet(readers.incrementAndGet(), Math::max);
                if (writers.get() != 0) {
                  violation.compareAndSet(null, "a reader overlapped a writer");
                }
                Thread.yield();
                readers.decrementAndGet();
              } finally {
                read.unlock();
              }
            }
          }
        } catch (Throwable e) {
          failure.compareAndSet(null, e);
        }
      }, "tck-rw-" + t));
    }
    threads.forEach(Thread::start);
    for (Thread t : threads) {
      t.join(50_000);
    }
    assertThat(failure.get()).isNull();
    assertThat(violation.get()).isNull();
    assertThat(maxReaders.get()).isGreaterThanOrEqualTo(1);
  }
}
