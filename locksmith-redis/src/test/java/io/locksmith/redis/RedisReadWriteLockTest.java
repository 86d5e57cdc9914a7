package io.locksmith.redis;

import static io.locksmith.tck.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.DistributedLock;
import io.locksmith.DistributedReadWriteLock;
import io.locksmith.Lease;
import io.locksmith.LeaseState;
import io.locksmith.LockKind;
import io.locksmith.LockOptions;
import io.locksmith.testkit.RedisServer;
import io.locksmith.testkit.RedisServerExtension;
import io.locksmith.testkit.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The Redis read-write lock's acceptance cases, each against a real server. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisReadWriteLockTest {
  @RegisterExtension
  static final RedisServerExtension REDIS = new RedisServerExtension();

  private static RedisLockClient client() {
    return RedisLockClient.create(REDIS.server().uri());
  }

  @Test
  void theBackendOffersReadWriteLocks() {
    try (RedisLockClient locks = client()) {
      assertThat(locks.capabilities().supports(LockKind.READ_WRITE)).isTrue();
      DistributedReadWriteLock rw = locks.readWriteLock("offered");
      assertThat(rw.name()).isEqualTo("offered");
      assertThat(rw.options()).isEqualTo(locks.options().defaultLockOptions());
    }
  }

  /**
   * Readers hand over hand: each takes its next read hold before it gives up the current one, so
   * without writer preference the read side would never be free and the writer would wait forever.
   * A reader whose next hold is refused (a writer waits) gives up the current one and then waits.
   */
  @Test
  void aWriterAcquiresWhileReadersKeepArriving() throws Exception {
    String name = "stream-of-readers";
    try (RedisLockClient a = client(); RedisLockClient b = client(); RedisLockClient w = client()) {
      AtomicBoolean stop = new AtomicBoolean();
      AtomicInteger held = new AtomicInteger();
      AtomicInteger reads = new AtomicInteger();
      AtomicInteger refused = new AtomicInteger();
      AtomicReference<Throwable> failure = new AtomicReference<>();
      List<Thread> readers = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        RedisLockClient c = t % 2 == 0 ? a : b;
        readers.add(new Thread(() -> {
          DistributedLock read = c.readWriteLock(name).readLock();
          try {
            Lease current = read.acquire(Duration.ofSeconds(30));
            held.incrementAndGet();
            while (!stop.get()) {
              LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2)); // the reader's work
              Optional<Lease> next = read.tryAcquire();
              next.ifPresent(l -> held.incrementAndGet());
              held.decrementAndGet();
              current.release();
              if (next.isEmpty()) {
                refused.incrementAndGet();
                next = Optional.of(read.acquire(Duration.ofSeconds(30)));
                held.incrementAndGet();
              }
              current = next.get();
              reads.incrementAndGet();
            }
            held.decrementAndGet();
            current.release();
          } catch (Throwable e) {
            failure.compareAndSet(null, e);
          }
        }, "reader-" + t));
      }
      readers.forEach(Thread::start);
      try {
        assertThat(eventually(Duration.ofSeconds(20), () -> reads.get() > 40)).as("readers run").isTrue();
        assertThat(refused.get()).as("no reader refused before a writer waits").isZero();
        assertThat(w.readWriteLock(name).writeLock().tryAcquire())
            .as("a writer that does not wait finds readers").isEmpty();
        long start = System.nanoTime();
        Optional<Lease> write = w.readWriteLock(name).writeLock().tryAcquire(Duration.ofSeconds(5));
        long waited = System.nanoTime() - start;
        assertThat(write).as("the writer got in while readers kept arriving").isPresent();
        assertThat(held.get()).as("no reader holds while the writer holds").isZero();
        assertThat(waited).as("within the bound").isLessThan(TimeUnit.SECONDS.toNanos(5));
        assertThat(refused.get()).as("readers were kept out once the writer waited").isPositive();
        int readsWhileWriting = reads.get();
        assertThat(w.readWriteLock(name).readLock().tryAcquire()).as("readers wait for the writer").isEmpty();
        assertThat(reads.get()).isEqualTo(readsWhileWriting);
        write.get().release();
        // and the readers go on after it
        assertThat(eventually(Duration.ofSeconds(10), () -> reads.get() > readsWhileWriting + 10)).isTrue();
      } finally {
        stop.set(true);
        for (Thread t : readers) {
          t.join(20_000);
        }
      }
      assertThat(failure.get()).isNull();
    }
  }

  @Test
  void downgradeOfAWriteLeaseLetsReadersInAndKeepsWritersOut() throws Exception {
    String name = "downgrade-lease";
    try (RedisLockClient a = client(); RedisLockClient b = client()) {
      DistributedReadWriteLock rw = a.readWriteLock(name);
      Lease write = rw.writeLock().acquire();
      Lease read = rw.downgrade(write);
      assertThat(write.state()).isEqualTo(LeaseState.RELEASED);
      assertThat(read.fencingToken()).isEqualTo(write.fencingToken());
      assertThat(rw.inspectWriter()).isEmpty();
      DistributedReadWriteLock other = b.readWriteLock(name);
      Lease otherRead = other.readLock().tryAcquire().orElseThrow();
      assertThat(other.writeLock().tryAcquire()).as("a writer cannot enter").isEmpty();
      assertThat(other.readLock().inspect()).hasValueSatisfying(info -> {
        assertThat(info.holdCount()).as("read holds").isEqualTo(2);
        assertThat(info.fencingToken()).isEqualTo(write.fencingToken());
      });
      otherRead.release();
      read.release();
      assertThat(other.writeLock().tryAcquire()).isPresent();
    }
  }

  @Test
  void downgradeInTheLockViewLetsReadersInAndKeepsWritersOut() throws Exception {
    String name = "downgrade-lock-view";
    try (RedisLockClient a = client(); RedisLockClient b = client()) {
      DistributedLock write = a.readWriteLock(name).writeLock();
      DistributedLock read = a.readWriteLock(name).readLock();
      write.lock();
      // a writer waiting meanwhile does not stop the downgrade
      CompletableFuture<Lease> waitingWriter =
          b.readWriteLock(name).writeLock().acquireAsync(Duration.ofSeconds(20)).toCompletableFuture();
      assertThat(eventually(Duration.ofSeconds(5), () -> write.inspect().orElseThrow().waiters() == 1)).isTrue();
      read.lock();
      write.unlock();
      assertThat(read.isHeldByCurrentThread()).isTrue();
      assertThat(waitingWriter).as("no writer slipped in").isNotDone();
      waitingWriter.cancel(false);
      assertThat(eventually(Duration.ofSeconds(5), () -> write.inspect().isEmpty()
          && read.inspect().orElseThrow().waiters() == 0)).isTrue();
      Lease otherRead = b.readWriteLock(name).readLock().tryAcquire().orElseThrow();
      assertThat(b.readWriteLock(name).writeLock().tryAcquire()).as("a writer cannot enter").isEmpty();
      otherRead.release();
      read.unlock();
      assertThat(b.readWriteLock(name).writeLock().tryAcquire()).isPresent();
    }
  }

  @Test
  void upgradeFailsFastWithAClearError() throws Exception {
    try (RedisLockClient a = client()) {
      DistributedReadWriteLock rw = a.readWriteLock("upgrade");
      rw.readLock().lock();
      long start = System.nanoTime();
      assertThatThrownBy(() -> rw.writeLock().tryLock(10, TimeUnit.SECONDS))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("upgrading a read lock is not supported")
          .hasMessageContaining("upgrade");
      assertThat(System.nanoTime() - start).isLessThan(TimeUnit.SECONDS.toNanos(1));
      assertThat(rw.readLock().getHoldCount()).isEqualTo(1);
      assertThat(rw.inspectWriter()).isEmpty();
      rw.readLock().unlock();
    }
  }

  @Test
  void aCrashedReadersHoldExpiresAndLetsAWriterIn() throws Exception {
    RedisServer server = REDIS.server();
    Duration lease = Duration.ofMillis(800);
    try (TcpProxy proxy = TcpProxy.start(server.host(), server.port());
        RedisLockClient reader = RedisLockClient.builder()
            .uri("redis://" + proxy.host() + ":" + proxy.port())
            .commandTimeout(Duration.ofMillis(300)).build();
        RedisLockClient writer = client()) {
      String name = "crashed-reader";
      Lease read = reader.readWriteLock(name, LockOptions.watched(lease)).readLock().acquire();
      Lease other = writer.readWriteLock(name).readLock().acquire();
      other.release();
      // the reader's process "dies": nothing it sends reaches the server any more, renewals included
      proxy.blackhole();
      long start = System.nanoTime();
      Lease write = writer.readWriteLock(name).writeLock().acquire(Duration.ofSeconds(10));
      long waited = System.nanoTime() - start;
      assertThat(waited).as("only once the read lease ran out").isGreaterThan(lease.toNanos() / 4);
      assertThat(write.isHeld()).isTrue();
      assertThat(eventually(Duration.ofSeconds(5), () -> read.state() == LeaseState.LOST)).isTrue();
      write.release();
      proxy.resetAll();
      proxy.heal();
    }
  }

  @Test
  void uncontendedReadAndWriteCostOneScriptEach() {
    RedisServer server = REDIS.server();
    try (RedisLockClient locks = client()) {
      DistributedReadWriteLock rw = locks.readWriteLock("cost", LockOptions.fixed(Duration.ofSeconds(30)));
      rw.readLock().tryAcquire().orElseThrow().release(); // handshakes are behind us
      Map<String, Long> before = CommandStats.calls(server);
      rw.readLock().tryAcquire().orElseThrow().release();
      rw.writeLock().tryAcquire().orElseThrow().release();
      Map<String, Long> after = CommandStats.calls(server);
      assertThat(after.get("evalsha") - before.getOrDefault("evalsha", 0L)).isEqualTo(4);
    }
  }

  @Test
  void keysShareTheLocksHashTagAndExpire() {
    RedisServer server = REDIS.server();
    try (RedisLockClient locks = client()) {
      Lease read = locks.readWriteLock("tagged/{x}").readLock().tryAcquire().orElseThrow();
      String[] keys = new RedisKeys(locks.options().namespace()).readWrite("tagged/{x}");
      String tag = keys[0].substring(keys[0].indexOf('{'), keys[0].indexOf('}') + 1);
      for (String key : keys) {
        assertThat(key).as("one hash tag for every key").contains(":rw:" + tag + ":tagged/{x}:");
      }
      assertThat(server.command("EXISTS", keys[1], keys[2])).isEqualTo("2");
      assertThat(Long.parseLong(server.command("PTTL", keys[1])))
          .as("the readers' keys expire with the longest read lease").isPositive();
      assertThat(Long.parseLong(server.command("PTTL", keys[2]))).isPositive();
      read.release();
      assertThat(server.command("EXISTS", keys[1], keys[2])).as("nothing left of the reader").isEqualTo("0");
    }
  }
}
