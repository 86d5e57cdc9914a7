package io.locksmith.redis;

import static io.locksmith.tck.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.ClientOptions;
import io.locksmith.DistributedReadWriteLock;
import io.locksmith.Lease;
import io.locksmith.LeaseLostException;
import io.locksmith.LeaseSource;
import io.locksmith.LeaseState;
import io.locksmith.LockOptions;
import io.locksmith.testkit.LogCapture;
import io.locksmith.testkit.RedisServer;
import io.locksmith.testkit.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Lease states that follow what the backend knows (issue 13 item 5), against a real Redis: {@code
 * UNCERTAIN} the moment the connection drops, {@code LOST} the moment a force-unlock removes the hold
 * (the script tells the holder on its wake-up channel), and every lease verified as soon as the
 * connection is back, so a server that restarted empty is found out in one round trip. Leases are the
 * default 30 s watched lease unless said otherwise: their first renewal is 10 s away, so anything seen
 * sooner was told, not found at a renewal.
 *
 * <p>Times are measured from just before the fault to the moment a listener heard the change (listeners
 * run on the client's event thread). Drops are a TCP reset through {@link TcpProxy} or a {@code SIGKILL}
 * of the server: a blackhole drops nothing, so it is not a connection drop.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class RedisLeaseSignalsTest {
  private static final LockOptions WATCHED = LockOptions.watched(Duration.ofSeconds(30));
  private static final LockOptions FIXED = LockOptions.fixed(Duration.ofSeconds(30));
  private static final String NAMESPACE = "signals";
  /**
   * "At once": well under the first renewal (10 s away) and the regressions these tests guard (3.2 s, 4.7 s
   * and 9 s), yet loose enough that a thread descheduled or a GC pause on a loaded 2-core CI host does not fail
   * it (it was 100 ms, and typical values are a few ms).
   */
  private static final long PROMPT_MILLIS = 1000;

  private RedisServer server;
  private final List<AutoCloseable> closing = new ArrayList<>();

  @BeforeEach
  void startServer() {
    server = RedisServer.start();
  }

  @AfterEach
  void stopAll() throws Exception {
    for (int i = closing.size() - 1; i >= 0; i--) {
      closing.get(i).close();
    }
    server.close();
  }

  private RedisLockClient client(String uri) {
    RedisLockClient c = RedisLockClient.builder().uri(uri).commandTimeout(Duration.ofSeconds(2))
        .options(ClientOptions.builder().namespace(NAMESPACE).build()).build();
    closing.add(c);
    return c;
  }

  private TcpProxy proxy() {
    TcpProxy p = TcpProxy.start(server.host(), server.port());
    closing.add(p);
    return p;
  }

  /** When each state was first entered by a lease, System.nanoTime(). */
  private static final class Seen {
    final Map<LeaseState, Long> at = new ConcurrentHashMap<>();
    final Map<LeaseState, CountDownLatch> latches = new ConcurrentHashMap<>();

    Seen(Lease lease) {
      for (LeaseState s : LeaseState.values()) {
        latches.put(s, new CountDownLatch(1));
      }
      lease.addListener((l, from, to) -> {
        at.putIfAbsent(to, System.nanoTime());
        latches.get(to).countDown();
      });
    }

    /** @return ms from {@code since} until {@code state} was entered; fails if not within {@code wait} */
    long millisUntil(LeaseState state, long since, Duration wait) throws InterruptedException {
      assertThat(latches.get(state).await(wait.toMillis(), TimeUnit.MILLISECONDS))
          .as("the lease became %s within %s", state, wait).isTrue();
      return TimeUnit.NANOSECONDS.toMillis(at.get(state) - since);
    }
  }

  // ------------------------------------------------------------------ connection drops

  /**
   * Regression: with the default 30 s lease, {@code state()} stayed {@code HELD} through a 4.7 s outage
   * while the same client failed every command. Now it is {@code UNCERTAIN} at once (within {@link
   * #PROMPT_MILLIS} of the drop), and {@code HELD} again once a renewal confirmed it after the reconnect.
   */
  @Test
  void uncertainWithin100MillisOfAConnectionDropAndHeldAgainOnceConfirmed() throws Exception {
    TcpProxy proxy = proxy();
    RedisLockClient c = client("redis://" + proxy.host() + ":" + proxy.port());
    Lease watched = c.lock("drop-watched", WATCHED).acquire();
    Lease fixed = c.lock("drop-fixed", FIXED).acquire();
    Seen w = new Seen(watched);
    Seen f = new Seen(fixed);

    long dropped = System.nanoTime();
    proxy.resetAll();
    long watchedMillis = w.millisUntil(LeaseState.UNCERTAIN, dropped, Duration.ofSeconds(5));
    long fixedMillis = f.millisUntil(LeaseState.UNCERTAIN, dropped, Duration.ofSeconds(5));
    assertThat(watchedMillis).as("ms from the reset to UNCERTAIN (watched lease)").isLessThan(PROMPT_MILLIS);
    assertThat(fixedMillis).as("ms from the reset to UNCERTAIN (fixed lease)").isLessThan(PROMPT_MILLIS);
    System.out.printf("connection reset: UNCERTAIN after %d ms (watched), %d ms (fixed)%n", watchedMillis,
        fixedMillis);

    // the proxy accepts the reconnect; both leases are confirmed by a verification round, not at a renewal
    // 10 s away, and the fixed one is not extended by it
    long heldMillis = w.millisUntil(LeaseState.HELD, dropped, Duration.ofSeconds(5));
    f.millisUntil(LeaseState.HELD, dropped, Duration.ofSeconds(5));
    System.out.printf("connection reset: HELD again after %d ms%n", heldMillis);
    assertThat(fixed.remainingValidity()).isLessThanOrEqualTo(FIXED.leaseTime());
    assertThat(Long.parseLong(server.command("PTTL", NAMESPACE + ":lock:{drop-fixed}")))
        .as("the server keeps the fixed lease at least as long as its holder believes it holds it")
        .isGreaterThanOrEqualTo(fixed.remainingValidity().toMillis() - 1);
    assertThat(watched.release()).isTrue();
    assertThat(fixed.release()).isTrue();
  }

  /**
   * Regression: after an empty restart the evicted holder said {@code HELD} for 3.2 s (and a fixed lease
   * until its end) while another client could take the lock. Now the kill makes both leases {@code
   * UNCERTAIN} at once, and the reconnect's verification finds them gone: {@code LOST} within the
   * reconnect delay (at most 1 s, {@link RedisBackend#MAX_RECONNECT_DELAY}) and one round trip of the
   * server being up again, never {@code HELD} in between.
   */
  @Test
  void anEmptyRestartIsLearnedAtTheReconnect() throws Exception {
    RedisLockClient c = client(server.uri());
    Lease watched = c.lock("restart-watched", WATCHED).acquire();
    Lease fixed = c.lock("restart-fixed", FIXED).acquire();
    Seen w = new Seen(watched);
    Seen f = new Seen(fixed);

    long killed = System.nanoTime();
    server.kill();
    assertThat(w.millisUntil(LeaseState.UNCERTAIN, killed, Duration.ofSeconds(5))).isLessThan(PROMPT_MILLIS);
    assertThat(f.millisUntil(LeaseState.UNCERTAIN, killed, Duration.ofSeconds(5))).isLessThan(PROMPT_MILLIS);
    server.restart(); // same port, no persistence: nothing survived
    long up = System.nanoTime();
    long watchedLost = w.millisUntil(LeaseState.LOST, up, Duration.ofSeconds(8));
    long fixedLost = f.millisUntil(LeaseState.LOST, up, Duration.ofSeconds(8));
    System.out.printf("empty restart: LOST %d ms (watched), %d ms (fixed) after the server was up%n", watchedLost,
        fixedLost);
    // a second past the reconnect delay for the reconnect itself (scripts, subscription, verification) on a
    // loaded host; the regression (HELD for 3.2 s, a fixed lease until its end) still fails
    long bound = RedisBackend.MAX_RECONNECT_DELAY.toMillis() + 1000;
    assertThat(watchedLost).as("ms from the server being up to LOST (watched)").isLessThan(bound);
    assertThat(fixedLost).as("ms from the server being up to LOST (fixed)").isLessThan(bound);
    assertThat(w.at).as("never confirmed by the empty server").doesNotContainKey(LeaseState.HELD);
    assertThat(f.at).doesNotContainKey(LeaseState.HELD);
    assertThat(watched.release()).isFalse();
  }

  /** Regression: no WARN said that leases were UNCERTAIN; only their loss was logged. One per episode. */
  @Test
  void oneWarnPerEpisodeWhenLeasesBecomeUncertain() throws Exception {
    TcpProxy proxy = proxy();
    RedisLockClient c = client("redis://" + proxy.host() + ":" + proxy.port());
    List<Seen> seen = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      seen.add(new Seen(c.lock("warn-" + i, WATCHED).acquire()));
    }
    try (LogCapture log = new LogCapture()) {
      long dropped = System.nanoTime();
      proxy.resetAll();
      for (Seen s : seen) {
        s.millisUntil(LeaseState.UNCERTAIN, dropped, Duration.ofSeconds(5));
        s.millisUntil(LeaseState.HELD, dropped, Duration.ofSeconds(5));
      }
      // (the end of the episode is logged at INFO, below the tests' log level)
      assertThat(log.text().lines().filter(l -> l.contains("WARN") && l.contains("UNCERTAIN")).toList())
          .as("one WARN for the three leases").singleElement().asString()
          .contains("3 lease(s) now UNCERTAIN", "connection to the backend dropped", c.clientId());

      // a second drop is a second episode
      proxy.resetAll();
      assertThat(eventually(Duration.ofSeconds(5), () -> log.lines("lease(s) now UNCERTAIN") == 2)).isTrue();
    }
  }

  // ------------------------------------------------------------------ force-unlock notices

  /**
   * Acquires with one client, force-unlocks with another, and returns the ms from just before the
   * force-unlock until the holder's lease was {@code LOST}.
   */
  private long millisUntilLostAfterForceUnlock(Function<RedisLockClient, LeaseSource> lock) throws Exception {
    RedisLockClient holder = client(server.uri());
    RedisLockClient operator = client(server.uri());
    Lease lease = lock.apply(holder).acquire();
    Seen seen = new Seen(lease);
    long start = System.nanoTime();
    assertThat(forceUnlock(lock.apply(operator))).isTrue();
    long millis = seen.millisUntil(LeaseState.LOST, start, Duration.ofSeconds(5));
    assertThat(lease.state()).isEqualTo(LeaseState.LOST);
    assertThat(lease.release()).isFalse();
    return millis;
  }

  private static boolean forceUnlock(LeaseSource source) {
    return source instanceof io.locksmith.DistributedLock l ? l.forceUnlock()
        : ((io.locksmith.DistributedSemaphore) source).forceUnlock();
  }

  @Test
  void forceUnlockOfAnExclusiveLockIsLostWithin100Millis() throws Exception {
    long millis = millisUntilLostAfterForceUnlock(c -> c.lock("fu-exclusive", WATCHED));
    System.out.printf("force-unlock (exclusive): LOST after %d ms%n", millis);
    assertThat(millis).isLessThan(PROMPT_MILLIS);
  }

  /** Regression: the fair lock's evicted holder said HELD for 9 s. */
  @Test
  void forceUnlockOfAFairLockIsLostWithin100Millis() throws Exception {
    long millis = millisUntilLostAfterForceUnlock(c -> c.fairLock("fu-fair", WATCHED));
    System.out.printf("force-unlock (fair): LOST after %d ms%n", millis);
    assertThat(millis).isLessThan(PROMPT_MILLIS);
  }

  @Test
  void forceUnlockOfASemaphorePermitIsLostWithin100Millis() throws Exception {
    long millis = millisUntilLostAfterForceUnlock(c -> c.semaphore("fu-semaphore", 2, WATCHED));
    System.out.printf("force-unlock (semaphore): LOST after %d ms%n", millis);
    assertThat(millis).isLessThan(PROMPT_MILLIS);
  }

  @Test
  void forceUnlockOfAReaderIsLostWithin100Millis() throws Exception {
    long millis = millisUntilLostAfterForceUnlock(c -> c.readWriteLock("fu-read", WATCHED).readLock());
    System.out.printf("force-unlock (reader): LOST after %d ms%n", millis);
    assertThat(millis).isLessThan(PROMPT_MILLIS);
  }

  @Test
  void forceUnlockOfAWriterIsLostWithin100Millis() throws Exception {
    long millis = millisUntilLostAfterForceUnlock(c -> c.readWriteLock("fu-write", WATCHED).writeLock());
    System.out.printf("force-unlock (writer): LOST after %d ms%n", millis);
    assertThat(millis).isLessThan(PROMPT_MILLIS);
  }

  /**
   * A notice ends exactly the lease it names: the owner id decides, and the kind tells a lock's kinds
   * apart. Notices are sent here by hand on the client's channel; messages on one channel arrive in
   * order, so once the last one took effect the ones before it were handled.
   */
  @Test
  void aNoticeEndsOnlyTheLeaseOfItsOwnerAndKind() throws Exception {
    RedisLockClient c = client(server.uri());
    String name = "notice-owner";
    Lease exclusive = c.lock(name, WATCHED).acquire();
    Lease fair = c.fairLock(name, WATCHED).acquire();
    Lease permit = c.semaphore(name, 1, WATCHED).acquire();
    String exclusiveOwner = c.lock(name).inspect().orElseThrow().owner();
    String fairOwner = c.fairLock(name).inspect().orElseThrow().owner();
    String channel = NAMESPACE + ":wake:" + c.clientId();
    Seen fairSeen = new Seen(fair);

    server.command("PUBLISH", channel, "!" + c.clientId() + ":zzz x" + name); // an owner id it never minted
    server.command("PUBLISH", channel, "!" + exclusiveOwner + " f" + name); // right owner, wrong kind
    server.command("PUBLISH", channel, "!" + exclusiveOwner + " x" + name + "-other"); // another lock's name
    server.command("PUBLISH", channel, "!" + fairOwner + " f" + name); // this one
    fairSeen.millisUntil(LeaseState.LOST, System.nanoTime(), Duration.ofSeconds(5));
    assertThat(exclusive.state()).isEqualTo(LeaseState.HELD);
    assertThat(permit.state()).isEqualTo(LeaseState.HELD);

    // and a real force-unlock of the exclusive lock ends that lease only
    Seen exclusiveSeen = new Seen(exclusive);
    assertThat(client(server.uri()).lock(name).forceUnlock()).isTrue();
    exclusiveSeen.millisUntil(LeaseState.LOST, System.nanoTime(), Duration.ofSeconds(5));
    assertThat(permit.state()).isEqualTo(LeaseState.HELD);
    assertThat(permit.release()).isTrue();
  }

  /**
   * What a notice cannot cover: an operator's raw {@code DEL} runs no Locksmith script, so the holder is
   * not told; its next renewal finds out. The server-side checks must still refuse a downgrade of such a
   * write hold (issue 12 item 7, which the TCK can no longer reach through a force-unlock: that is told).
   */
  @Test
  void aDowngradeAfterAnUnannouncedDeletionFails() throws Exception {
    RedisLockClient a = client(server.uri());
    RedisLockClient b = client(server.uri());
    String name = "silent-downgrade";
    DistributedReadWriteLock rw = a.readWriteLock(name, WATCHED);
    Lease write = rw.writeLock().acquire();
    server.command("DEL", NAMESPACE + ":rw:{" + name + "}:w");
    Lease other = b.readWriteLock(name).writeLock().acquire(Duration.ofSeconds(5));
    other.release();
    assertThat(write.state()).as("nobody told the holder").isEqualTo(LeaseState.HELD);
    assertThatThrownBy(() -> rw.downgrade(write)).isInstanceOf(LeaseLostException.class);
    assertThat(write.state()).isEqualTo(LeaseState.LOST);
    Lease next = b.readWriteLock(name).writeLock().acquire(Duration.ofSeconds(5));
    assertThat(next.fencingToken()).isGreaterThan(other.fencingToken());
    next.release();
  }
  /**
   * Issue 23 item 26: a lock released after a delay (ShedLock's lockAtLeastFor) is freed at once by an empty
   * restart. That cannot be undone, but it is no longer silent: the reconnect verifies the pending delayed
   * releases and reports the one the server lost at WARN. Before, nothing was logged (the 10 s ran out).
   */
  @Test
  void aDelayedReleaseThatAnEmptyRestartFreedIsReported() throws Exception {
    RedisLockClient c = client(server.uri());
    String name = "delayed-restart";
    Lease lease = c.lock(name, WATCHED).acquire();
    assertThat(lease.releaseAfter(Duration.ofSeconds(30))).isTrue();
    try (LogCapture log = new LogCapture()) {
      server.kill();
      server.restart(); // same port, no persistence: the delayed hold is gone
      assertThat(LogCapture.eventually(Duration.ofSeconds(10),
          () -> log.lines("lock '" + name + "' was released after a delay") == 1))
          .as("the lost delayed release is reported").isTrue();
      assertThat(log.text()).contains("lockAtLeastFor is not kept");
    }
    Lease other = client(server.uri()).lock(name).tryAcquire().orElseThrow(); // what the WARN says: it is free
    assertThat(other.release()).isTrue();
  }

  /** A reconnect to a server that kept the delayed hold reports nothing, and the hold stays. */
  @Test
  void aDelayedReleaseTheServerKeptAcrossAReconnectIsNotReported() throws Exception {
    TcpProxy proxy = proxy();
    RedisLockClient c = client("redis://" + proxy.host() + ":" + proxy.port());
    String name = "delayed-reconnect";
    Lease lease = c.lock(name, WATCHED).acquire();
    Seen seen = new Seen(c.lock("delayed-reconnect-probe", WATCHED).acquire()); // tells when the reconnect verified
    assertThat(lease.releaseAfter(Duration.ofSeconds(30))).isTrue();
    try (LogCapture log = new LogCapture()) {
      long dropped = System.nanoTime();
      proxy.resetAll();
      seen.millisUntil(LeaseState.UNCERTAIN, dropped, Duration.ofSeconds(5));
      seen.millisUntil(LeaseState.HELD, dropped, Duration.ofSeconds(5)); // verified after the reconnect
      // sent on the same connection after the check of the delayed release, so answered after it
      assertThat(c.inspect(name)).as("still taken for the delay").isPresent();
      RedisLockClient other = client(server.uri());
      assertThat(other.lock(name).tryAcquire()).as("still taken for the delay").isEmpty();
      assertThat(log.lines("was released after a delay")).as("nothing to report").isZero();
    }
  }
}
