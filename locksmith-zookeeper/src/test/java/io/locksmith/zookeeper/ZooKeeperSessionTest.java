package io.locksmith.zookeeper;

import static io.locksmith.tck.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.Lease;
import io.locksmith.LeaseState;
import io.locksmith.LockOptions;
import io.locksmith.testkit.LogCapture;
import io.locksmith.testkit.TcpProxy;
import io.locksmith.testkit.zookeeper.ZooKeeperExtension;
import io.locksmith.testkit.zookeeper.ZooKeeperSessions;
import io.locksmith.testkit.zookeeper.ZooKeeperTestServer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The session is the lease (issue 14, "Leases and loss"). A holder cut off from the ensemble declares
 * its leases lost no later than the earliest moment the server could expire its session, so before the
 * server deletes its node and another client is granted; a short outage that the session survives leaves
 * the leases held; a session expired by the server loses them and the client carries on in a new one.
 */
class ZooKeeperSessionTest {
  private static final Duration SESSION = Duration.ofSeconds(2);
  /** How late the holder's loss-check timer may run on a loaded machine. */
  private static final Duration LOSS_CHECK_LATENESS = Duration.ofMillis(700);
  private static final LockOptions LONG = LockOptions.watched(Duration.ofSeconds(30));
  /** The partition test's server tick: a session of 2 s is 20 ticks, the most it accepts. */
  private static final Duration PARTITION_TICK = Duration.ofMillis(100);

  @RegisterExtension
  static final ZooKeeperExtension<ZooKeeperTestServer> ZK = ZooKeeperExtension.sharedServer();

  private static ZooKeeperLockClient through(TcpProxy proxy, Duration session) {
    return ZooKeeperLockClient.builder().uri("zookeeper://" + proxy.host() + ":" + proxy.port())
        .sessionTimeout(session).connectionTimeout(Duration.ofMillis(500)).build();
  }

  /**
   * The holder's link is black-holed: its leases are declared lost before the server expires its session
   * (which is what lets the waiter in), so the margin between the two is positive.
   */
  @Test
  void aPartitionedHolderLosesItsLeaseBeforeAnotherClientIsGranted() throws Exception {
    String name = "partition-" + System.nanoTime();
    // Its own server with a 100 ms tick (issue 23, item 21): the server expires the session at the first
    // tick at or after its last packet + 2 s, so the other client is granted at most 100 ms (+ the expiry
    // thread's and the grant's latency) after last packet + 2 s. With the shared server's 1 s tick that
    // rounding slack was up to a second, and a holder declaring its loss up to a second too late still
    // passed the margin check below; now a bound later than last proof + 2 s + about 100 ms fails it.
    try (ZooKeeperTestServer server = ZooKeeperTestServer.builder().tickTime(PARTITION_TICK).start();
        TcpProxy proxy = TcpProxy.start(server.host(), server.port());
        // connecting to a server that just started, on a loaded machine, may take more than 500 ms
        ZooKeeperLockClient holder = ZooKeeperLockClient.builder().uri("zookeeper://" + proxy.host() + ":" + proxy.port())
            .sessionTimeout(SESSION).connectionTimeout(Duration.ofSeconds(2)).build();
        ZooKeeperLockClient other = ZooKeeperLockClient.create(server.uri())) {
      LeaseEventLog log = new LeaseEventLog();
      holder.backend.observe(log);
      Lease lease = holder.lock(name, LONG).acquire();
      java.util.concurrent.atomic.AtomicLong onLostAt = new java.util.concurrent.atomic.AtomicLong();
      java.util.List<io.locksmith.LeaseState> states = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
      lease.addListener((l, from, to) -> states.add(to));
      lease.onLost(() -> onLostAt.set(System.nanoTime()));
      CompletableFuture<Long> grantedAt = other.lock(name).acquireAsync(Duration.ofSeconds(30)).toCompletableFuture()
          .thenApply(l -> {
            long at = System.nanoTime();
            l.release();
            return at;
          });
      proxy.blackhole();
      // read once the link is cut: every request the holder can still prove was answered was sent
      // before this moment, so the holder's own deadline (last proof + session − drift allowance) is at
      // most cut + SESSION. Read before blackhole(), the time blackhole() took came off the slack.
      long cut = System.nanoTime();
      long granted = grantedAt.get(20, TimeUnit.SECONDS);
      LeaseEventLog.Event lost = log.first("lost");
      assertThat(lost).as("the holder declared its lease lost").isNotNull();
      assertThat(lost.name()).isEqualTo(name);
      long margin = granted - lost.nanos();
      assertThat(onLostAt.get()).as("the lease's onLost ran").isNotZero();
      long leaseMargin = granted - onLostAt.get();
      System.out.printf("[zk-partition] session %d ms: lost %d ms after the cut (onLost ran %d ms after the cut),"
          + " the other client granted %d ms after the cut, margin %d ms (onLost: %d ms)%n", SESSION.toMillis(),
          TimeUnit.NANOSECONDS.toMillis(lost.nanos() - cut), TimeUnit.NANOSECONDS.toMillis(onLostAt.get() - cut),
          TimeUnit.NANOSECONDS.toMillis(granted - cut), TimeUnit.NANOSECONDS.toMillis(margin),
          TimeUnit.NANOSECONDS.toMillis(leaseMargin));
      assertThat(leaseMargin).as("the lease was LOST, its onLost run, before the other client was granted")
          .isPositive();
      assertThat(lease.state()).isEqualTo(LeaseState.LOST);
      // The bound (last proof + 2 s − 500 ms follower allowance − 22 ms drift, the tick not declared) comes
      // about when the connection is suspended (2/3 of the session without an answer): UNCERTAIN may come
      // first or not at all; LOST is the end either way.
      assertThat(states).as("LOST in the end").endsWith(LeaseState.LOST);
      assertThat(margin).as("lost %d ms before the other client was granted (cut off %d ms before that)",
          TimeUnit.NANOSECONDS.toMillis(margin), TimeUnit.NANOSECONDS.toMillis(granted - cut)).isPositive();
      // The loss check is a timer task due at that deadline; a descheduled timer thread runs it a little
      // late. The allowance covers that, while a holder that waited for its handle to report the loss
      // (suspended after 2/3 of the session, lost a session later: about 3.3 s) still fails here, and the
      // margin above stays the safety check.
      assertThat(lost.nanos() - cut).as("declared within the session timeout of the cut (plus %d ms of timer"
          + " scheduling)", LOSS_CHECK_LATENESS.toMillis())
          .isLessThanOrEqualTo(SESSION.plus(LOSS_CHECK_LATENESS).toNanos());
      assertThat(log.kinds()).as("lost, and nothing restored after it").contains("lost").doesNotContain("restored");
      proxy.heal();
      proxy.resetAll();
      assertThat(lease.release()).as("the release reports the loss").isFalse();
      try (Lease again = holder.lock(name).acquire(Duration.ofSeconds(20))) {
        assertThat(again.fencingToken()).as("the holder works again, in a new session")
            .isGreaterThan(lease.fencingToken());
      }
    }
  }

  /**
   * Issue 23 item 13 (the partition-follower campaign's overlaps after a heal): an acquisition started
   * while the client is disconnected and its session expired. Its create goes out only once the handle has
   * connected in a new session, so the session seen when it was sent was none and the reply proves nothing
   * (item 17: a proof counts only for the session that sent the request). Before the fix the grant was
   * reported in that never-proven session, and the loss check declared it LOST at once and deleted the
   * node: a grant lost within milliseconds, the next client granted right after. The grant must prove its
   * session through the leader first, so it stands. The 20 s session (the most the shared server's 1 s tick
   * accepts, so it is not negotiated down) puts the heartbeat 3.3 s apart: it does not prove the new
   * session before the grant by chance.
   */
  @Test
  void aGrantInANewSessionIsProvenBeforeItIsReported() throws Exception {
    String name = "new-session-" + System.nanoTime();
    try (TcpProxy proxy = TcpProxy.start(ZK.get().host(), ZK.get().port());
        ZooKeeperLockClient holder = ZooKeeperLockClient.builder().uri("zookeeper://" + proxy.host() + ":"
            + proxy.port()).sessionTimeout(Duration.ofSeconds(20)).connectionTimeout(Duration.ofSeconds(10)).build()) {
      LeaseEventLog log = new LeaseEventLog();
      holder.backend.observe(log);
      holder.lock(name).acquire().release(); // the first session, proven
      long first = holder.backend.currentSession();
      byte[] password = holder.backend.sessionPassword();
      proxy.refuseNew(true);
      proxy.resetAll();
      assertThat(eventually(Duration.ofSeconds(5), () -> holder.backend.handleSession() == 0))
          .as("disconnected").isTrue();
      ZooKeeperSessions.expire(ZK.get().connectString(), first, password, Duration.ofSeconds(5));
      CompletableFuture<Lease> acquired = holder.lock(name, LONG).acquireAsync(Duration.ofSeconds(20))
          .toCompletableFuture();
      proxy.refuseNew(false);
      Lease lease = acquired.get(20, TimeUnit.SECONDS);
      assertThat(holder.backend.currentSession()).as("granted in a new session").isNotEqualTo(first);
      // before the fix: LOST within milliseconds ("nothing proves its ZooKeeper session alive")
      assertThat(eventually(Duration.ofMillis(500), () -> lease.state() == LeaseState.LOST))
          .as("the grant stands: %s", log.events()).isFalse();
      assertThat(log.events()).as("no lease of the new session lost").noneMatch(e -> e.kind().equals("lost")
          && name.equals(e.name()));
      assertThat(lease.release()).isTrue();
    }
  }

  /**
   * A cut shorter than the session: the connection drops (suspended: uncertain), the client reconnects in
   * the same session and the lease is held again.
   */
  @Test
  void aShortCutThatTheSessionSurvivesKeepsTheLease() throws Exception {
    String name = "short-cut-" + System.nanoTime();
    Duration session = Duration.ofSeconds(6);
    try (TcpProxy proxy = TcpProxy.start(ZK.get().host(), ZK.get().port());
        ZooKeeperLockClient holder = through(proxy, session);
        ZooKeeperLockClient other = ZooKeeperLockClient.create(ZK.get().uri())) {
      LeaseEventLog log = new LeaseEventLog();
      holder.backend.observe(log);
      Lease lease = holder.lock(name, LockOptions.watched(Duration.ofSeconds(9))).acquire();
      long sessionBefore = holder.backend.currentSession();
      proxy.blackhole();
      // 2 s of silence, well within the session, then the connection drops
      assertThat(eventually(Duration.ofSeconds(2), () -> log.first("uncertain") != null)).isFalse();
      proxy.heal();
      proxy.resetAll();
      assertThat(eventually(Duration.ofSeconds(10), () -> log.first("uncertain") != null))
          .as("suspended").isTrue();
      assertThat(eventually(Duration.ofSeconds(5), () -> lease.state() == LeaseState.UNCERTAIN
          || log.first("restored") != null)).as("the lease UNCERTAIN at once").isTrue();
      assertThat(eventually(Duration.ofSeconds(10), () -> log.first("restored") != null))
          .as("reconnected in the same session").isTrue();
      assertThat(holder.backend.currentSession()).isEqualTo(sessionBefore);
      assertThat(log.first("lost")).as("nothing lost: %s", log.events()).isNull();
      assertThat(other.lock(name).tryAcquire()).as("still held").isEmpty();
      assertThat(eventually(Duration.ofSeconds(10), () -> lease.state() == LeaseState.HELD))
          .as("verified HELD again after the reconnection").isTrue();
      assertThat(lease.release()).isTrue();
    }
  }

  /**
   * The server expires the holder's session (a second handle joins and closes it): the node goes at once,
   * the holder learns its session is over and its lease lost, and it carries on in a new session.
   */
  @Test
  void aSessionExpiredByTheServerLosesItsLeasesAndTheClientCarriesOn() throws Exception {
    String name = "expired-" + System.nanoTime();
    try (LogCapture logged = new LogCapture();
        ZooKeeperLockClient holder = ZooKeeperLockClient.create(ZK.get().uri());
        ZooKeeperLockClient other = ZooKeeperLockClient.create(ZK.get().uri());
        RawZooKeeper raw = new RawZooKeeper(ZK.get().connectString())) {
      LeaseEventLog log = new LeaseEventLog();
      holder.backend.observe(log);
      // a lease long enough that the session's end, not the holder's own timer, ends it
      Lease lease = holder.lock(name, LockOptions.watched(Duration.ofSeconds(8))).acquire();
      CompletableFuture<Lease> next = other.lock(name).acquireAsync(Duration.ofSeconds(20)).toCompletableFuture();
      long session = holder.backend.currentSession();
      ZooKeeperSessions.expire(ZK.get().connectString(), session, holder.backend.sessionPassword(), Duration.ofSeconds(5));
      Lease taken = next.get(10, TimeUnit.SECONDS);
      assertThat(eventually(Duration.ofSeconds(10), () -> log.first("lost") != null)).as("the holder was told").isTrue();
      assertThat(eventually(Duration.ofSeconds(10), () -> lease.state() == LeaseState.LOST))
          .as("and so was its lease").isTrue();
      // issue 25 item 4: the log said "its hold was removed by someone else" for a session that ran out
      String lost = "(token " + lease.fencingToken() + ") is lost: ";
      assertThat(eventually(Duration.ofSeconds(10), () -> logged.text().contains(lost))).isTrue();
      String line = logged.text().lines().filter(l -> l.contains(lost)).findFirst().orElseThrow();
      assertThat(line).contains("session").doesNotContain("someone else");
      assertThat(eventually(Duration.ofSeconds(10), () -> holder.backend.currentSession() != session))
          .as("a new session").isTrue();
      taken.release();
      try (Lease again = holder.lock(name).acquire(Duration.ofSeconds(10))) {
        assertThat(again.fencingToken()).isGreaterThan(taken.fencingToken());
      }
      assertThat(raw.children(holder.backend.parent(Side.EXCLUSIVE, name))).isEmpty();
    }
  }
}
