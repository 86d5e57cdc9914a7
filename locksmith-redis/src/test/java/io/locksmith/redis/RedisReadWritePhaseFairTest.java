package io.locksmith.redis;

import static io.locksmith.tck.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.Lease;
import io.locksmith.LockOptions;
import io.locksmith.testkit.RedisServer;
import io.locksmith.testkit.RedisServerExtension;
import io.locksmith.testkit.TcpProxy;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Phase-fair admission of the Redis read-write lock (issue 12 item 5) where the server's bookkeeping is
 * what matters: a reader that was let in but never comes holds the next writer back only until its
 * waiting entry ends, and the tickets go away with the waiters. The ordering itself is in WriteLockTck.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisReadWritePhaseFairTest {
  @RegisterExtension
  static final RedisServerExtension REDIS = new RedisServerExtension();

  private static final Duration RECHECK = Duration.ofMillis(500);

  private static RedisLockClient client(String uri) {
    return RedisLockClient.builder().uri(uri).waiterRecheck(RECHECK).commandTimeout(Duration.ofMillis(400)).build();
  }

  private static int waiters(RedisLockClient c, String name) {
    return c.readWriteLock(name).writeLock().inspect().map(i -> i.waiters()).orElse(-1);
  }

  @Test
  void aReaderLetInThatNeverComesHoldsTheNextWriterBackOnlyUntilItsEntryEnds() throws Exception {
    RedisServer server = REDIS.server();
    String name = "dead-due-reader";
    try (TcpProxy proxy = TcpProxy.start(server.host(), server.port());
        RedisLockClient reader = client("redis://" + proxy.host() + ":" + proxy.port());
        RedisLockClient a = client(server.uri());
        RedisLockClient b = client(server.uri())) {
      Lease first = a.readWriteLock(name, LockOptions.watched(Duration.ofSeconds(30))).writeLock().acquire();
      CompletableFuture<Lease> read =
          reader.readWriteLock(name).readLock().acquireAsync(Duration.ofSeconds(30)).toCompletableFuture();
      read.exceptionally(f -> null); // it fails once cut off; what matters is what it left on the server
      assertThat(eventually(Duration.ofSeconds(5), () -> waiters(a, name) == 1)).as("the reader waits").isTrue();
      CompletableFuture<Lease> next =
          b.readWriteLock(name).writeLock().acquireAsync(Duration.ofSeconds(30)).toCompletableFuture();
      assertThat(eventually(Duration.ofSeconds(5), () -> waiters(a, name) == 2)).as("and a writer").isTrue();

      // the reader's process "dies" while it waits: its wake-up, its attempts and its cancellation are lost
      proxy.blackhole();
      long cutOff = System.nanoTime();
      first.release();
      Lease second = next.get(15, TimeUnit.SECONDS);
      long waited = System.nanoTime() - cutOff;
      // the reader last registered less than one re-check before the cut; its entry lasted 2 s beyond that
      assertThat(waited).as("the writer waited for the reader let in with the batch")
          .isGreaterThan(TimeUnit.MILLISECONDS.toNanos(1500));
      assertThat(waited).as("but only until that reader's entry ended")
          .isLessThan(TimeUnit.SECONDS.toNanos(10));
      second.release();

      String[] keys = new RedisKeys(a.options().namespace()).readWrite(name);
      assertThat(server.command("ZCARD", keys[4])).as("no waiting reader left").isEqualTo("0");
      assertThat(server.command("ZCARD", keys[7])).as("no ticket left").isEqualTo("0");
      proxy.heal();
    }
  }

  /**
   * The write generation outlives a write grant (it is kept for the write lease); like the retained
   * fence it is bookkeeping, so {@code locksmith list} does not show a released lock because of it.
   */
  @Test
  void theWriteGenerationIsBookkeepingNotActivity() {
    RedisServer server = REDIS.server();
    String name = "generation-kept";
    try (RedisLockClient locks = client(server.uri())) {
      locks.readWriteLock(name).writeLock().tryAcquire().orElseThrow().release();
      String[] keys = new RedisKeys(locks.options().namespace()).readWrite(name);
      assertThat(server.command("GET", keys[8])).as("one write generation").isEqualTo("1");
      assertThat(Long.parseLong(server.command("PTTL", keys[8]))).as("it expires").isPositive();
      assertThat(RedisLockScan.locks(locks, 100, Duration.ofSeconds(30)).locks())
          .as("a released read-write lock is not found")
          .doesNotContain(new io.locksmith.LockScan.Found(io.locksmith.LockKind.READ_WRITE, name));
    }
  }
}
