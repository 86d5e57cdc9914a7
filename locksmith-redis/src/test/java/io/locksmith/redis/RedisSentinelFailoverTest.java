package io.locksmith.redis;

import static io.locksmith.tck.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.BackendUnavailableException;
import io.locksmith.Lease;
import io.locksmith.LeaseState;
import io.locksmith.LockInfo;
import io.locksmith.LockOptions;
import io.locksmith.testkit.RedisServer;
import io.locksmith.testkit.RedisSentinelExtension;
import io.locksmith.testkit.RedisSentinelGroup;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.Timeout;

/**
 * Failovers of a real Sentinel deployment under clients that were connected before them. Three cases
 * crash the master for good ({@code SIGKILL}); one freezes it ({@code SIGSTOP}) and one demotes it with
 * {@code SENTINEL FAILOVER}, both of which leave it running as a replica afterwards. So the group starts
 * with four replicas: whatever the order, every case finds a replica to promote.
 *
 * <p>Figures are printed to stdout with the prefix {@code [sentinel]} so they can be quoted.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class RedisSentinelFailoverTest {
  /** Longest wait for the sentinels to agree on a new master; one usually takes 3 to 6 s. */
  private static final Duration FAILOVER_WAIT = Duration.ofSeconds(40);
  /** What a client may need beyond the failover itself to work on the new master. */
  private static final Duration REACQUIRE_SLACK = Duration.ofSeconds(5);

  @RegisterExtension
  static final RedisSentinelExtension SENTINEL = RedisSentinelExtension.withReplicas(4);
  private final List<RedisLockClient> clients = new ArrayList<>();

  private static RedisSentinelGroup group() {
    return SENTINEL.group();
  }

  @AfterEach
  void closeClients() {
    for (RedisLockClient c : clients) {
      c.close();
    }
    clients.clear();
  }

  @Test
  void clientsConnectedBeforeACrashAcquireAndWakeUpOnThePromotedReplica() throws Exception {
    RedisLockClient holder = client();
    RedisLockClient waiter = client();
    assertThat(holder.serverDescription()).isEqualTo(group().sentinelUri());
    assertThat(holder.lock("before-crash").tryAcquire().orElseThrow().release()).isTrue();

    long crashedAt = System.nanoTime();
    RedisServer crashed = group().killMaster();
    CompletableFuture<Long> failoverNanos = failoverFrom(crashedAt);
    FirstGrantAfterFailover first = FirstGrantAfterFailover.await(holder, "after-crash-",
        FAILOVER_WAIT.plus(REACQUIRE_SLACK), crashedAt);
    long reacquireMillis = first.millis();
    long failoverMillis = TimeUnit.NANOSECONDS.toMillis(failoverNanos.get(60, TimeUnit.SECONDS));
    RedisServer promoted = group().master();
    System.out.printf("[sentinel] crash -> sentinels agree on a new master: %d ms; crash -> first acquire of a"
        + " new lock by a client connected before the crash: %d ms (%d attempts)%n",
        failoverMillis, reacquireMillis, first.attempts());

    assertThat(first.acquired()).as("acquired again after the crash").isTrue();
    // real time is the point: the measured failover + 5 s slack for the client's reconnect and retry
    assertThat(reacquireMillis).as("crash -> re-acquire (ms) vs failover %d ms + %d ms", failoverMillis,
        REACQUIRE_SLACK.toMillis()).isLessThan(failoverMillis + REACQUIRE_SLACK.toMillis());
    assertThat(promoted).isNotSameAs(crashed);
    assertThat(promoted.command("EXISTS", key(holder, first.lease().lockName())))
        .as("the new lock lives on the promoted replica").isEqualTo("1");
    assertThat(first.lease().release()).isTrue();

    // the waiter's pub/sub connection followed the failover: its channel is subscribed on the new master
    assertThat(eventually(Duration.ofSeconds(10),
        () -> subscribers(promoted, channel(waiter)) == 1))
        .as("waiter re-subscribed on the new master").isTrue();
    assertHandOffByWakeUp(holder, waiter, "handoff-after-crash");
  }

  @Test
  void aGrantThatNeverReachedTheReplicasEndsLostAfterTheCrash() throws Exception {
    RedisLockClient holder = client();
    RedisLockClient other = client();
    group().freezeReplication();
    // 1 s: runs out during the outage; 20 s: outlives it, so the promoted replica must say "not yours"
    Lease brief = holder.lock("frozen-brief", LockOptions.watched(Duration.ofSeconds(1)))
        .acquire(Duration.ofSeconds(5));
    long longAcquiredAt = System.nanoTime();
    Lease longer = holder.lock("frozen-long", LockOptions.watched(Duration.ofSeconds(20)))
        .acquire(Duration.ofSeconds(5));
    LeaseHistory briefHistory = LeaseHistory.of(brief);
    LeaseHistory longHistory = LeaseHistory.of(longer);
    assertThat(brief.isHeld()).isTrue();
    assertThat(longer.isHeld()).isTrue();
    for (RedisServer replica : group().replicas()) {
      assertThat(replica.command("EXISTS", key(holder, "frozen-brief"), key(holder, "frozen-long")))
          .as("grants on %s while replication is frozen", replica).isEqualTo("0");
    }

    long crashedAt = System.nanoTime();
    group().killMaster();
    CompletableFuture<Long> failoverNanos = failoverFrom(crashedAt);

    assertThat(briefHistory.lost.await(3, TimeUnit.SECONDS)).as("1 s lease lost within 3 s of the crash")
        .isTrue();
    long briefLostMillis = TimeUnit.NANOSECONDS.toMillis(briefHistory.lostAt() - crashedAt);

    // Another client gets the same lock on the promoted replica: the double grant that asynchronous
    // replication allows. Its token is still larger (time floor, same clock).
    AtomicReference<Lease> second = new AtomicReference<>();
    assertThat(eventually(FAILOVER_WAIT.plus(REACQUIRE_SLACK), () -> {
      try {
        other.lock("frozen-long").tryAcquire().ifPresent(second::set);
        return second.get() != null;
      } catch (BackendUnavailableException e) {
        return false;
      }
    })).as("the lock is free on the promoted replica").isTrue();
    LeaseState firstHolderThen = longer.state();
    long secondGrantMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - crashedAt);
    assertThat(second.get().fencingToken()).isGreaterThan(longer.fencingToken());

    long failoverMillis = TimeUnit.NANOSECONDS.toMillis(failoverNanos.get(60, TimeUnit.SECONDS));
    // reconnect (< failover + slack) plus at most one UNCERTAIN retry interval (lease / 6)
    long bound = failoverMillis + REACQUIRE_SLACK.toMillis() + 5_000;
    assertThat(longHistory.lost.await(bound, TimeUnit.MILLISECONDS)).as("20 s lease lost after the failover")
        .isTrue();
    long longLostMillis = TimeUnit.NANOSECONDS.toMillis(longHistory.lostAt() - crashedAt);
    System.out.printf("[sentinel] frozen replication: failover %d ms; 1 s lease %s, LOST at +%d ms;"
        + " other client granted the 20 s lease's lock at +%d ms (first holder then %s);"
        + " 20 s lease %s, LOST at +%d ms%n", failoverMillis, briefHistory, briefLostMillis,
        secondGrantMillis, firstHolderThen, longHistory, longLostMillis);

    assertThat(brief.state()).isEqualTo(LeaseState.LOST);
    assertThat(longer.state()).isEqualTo(LeaseState.LOST);
    briefHistory.assertNeverHeldAfterDoubt();
    longHistory.assertNeverHeldAfterDoubt();
    assertThat(longLostMillis).as("20 s lease lost (ms after the crash)").isLessThan(bound);
    // lost because the promoted replica answered, not because its validity ran out
    assertThat(longHistory.lostAt()).isLessThan(longAcquiredAt + TimeUnit.SECONDS.toNanos(19));
    assertThat(longer.release()).isFalse();
    assertThat(group().master().command("EXISTS", key(holder, "frozen-brief"))).isEqualTo("0");
    assertThat(second.get().release()).isTrue();
  }

  @Test
  void aReplicatedGrantHeldAcrossTheCrashMatchesWhatThePromotedReplicaHas() throws Exception {
    RedisLockClient holder = client();
    RedisLockClient other = client();
    String name = "replicated";
    Lease lease = holder.lock(name, LockOptions.watched(Duration.ofSeconds(20))).acquire(Duration.ofSeconds(5));
    LeaseHistory history = LeaseHistory.of(lease);
    group().awaitReplication(Duration.ofSeconds(10));
    for (RedisServer replica : group().replicas()) {
      assertThat(replica.command("EXISTS", key(holder, name))).as("grant replicated to %s", replica)
          .isEqualTo("1");
    }

    group().killMaster();
    RedisServer promoted = group().awaitFailover(FAILOVER_WAIT);
    assertThat(eventually(FAILOVER_WAIT, () -> reachable(holder))).as("holder reconnected").isTrue();
    // A renewal sent from now on decides: it either extends the validity past what it is now, or the
    // promoted replica says the key is not ours and the lease goes LOST.
    long from = System.nanoTime();
    long validityEnd = lease.remainingValidity().toNanos();
    assertThat(eventually(Duration.ofSeconds(20), () -> lease.state() == LeaseState.LOST
        || System.nanoTime() - from + lease.remainingValidity().toNanos() > validityEnd + 100_000_000L))
        .as("a renewal after the failover was answered").isTrue();

    LeaseState state = lease.state();
    String exists = promoted.command("EXISTS", key(holder, name));
    // the holder now verifies its leases the moment it is back, so this can be decided before the other
    // client has reconnected: wait for it too rather than fail its inspect
    assertThat(eventually(FAILOVER_WAIT, () -> reachable(other))).as("other client reconnected").isTrue();
    Optional<LockInfo> info = other.inspect(name);
    System.out.printf("[sentinel] replicated grant across the crash: %s, ends %s;"
        + " EXISTS on the new master = %s%n", history, state, exists);
    if (state == LeaseState.HELD) {
      assertThat(exists).isEqualTo("1");
      assertThat(info).hasValueSatisfying(i -> {
        assertThat(i.owner()).startsWith(holder.clientId() + ":");
        assertThat(i.fencingToken()).isEqualTo(lease.fencingToken());
      });
      assertThat(other.lock(name).tryAcquire()).as("still exclusive on the new master").isEmpty();
      assertThat(lease.release()).isTrue();
    } else {
      assertThat(state).isEqualTo(LeaseState.LOST);
      assertThat(info.map(LockInfo::owner).orElse("")).doesNotStartWith(holder.clientId() + ":");
    }
  }

  @Test
  void clientsFollowAManualFailoverThatDemotesTheLiveMaster() throws Exception {
    RedisLockClient holder = client();
    RedisLockClient waiter = client();
    assertThat(holder.lock("before-switch").tryAcquire().orElseThrow().release()).isTrue();
    RedisServer demoted = group().master();

    runningSentinel().command("SENTINEL", "FAILOVER", group().masterName());
    RedisServer promoted = group().awaitFailover(FAILOVER_WAIT);
    assertThat(promoted).isNotSameAs(demoted);
    FormerMaster.demoteAsSentinelWould(demoted, promoted, FAILOVER_WAIT);

    FirstGrantAfterFailover first = FirstGrantAfterFailover.await(holder, "after-switch-", FAILOVER_WAIT,
        System.nanoTime());
    assertThat(first.acquired()).as("acquired after the switch").isTrue();
    assertThat(promoted.command("EXISTS", key(holder, first.lease().lockName()))).isEqualTo("1");
    assertThat(first.lease().release()).isTrue();
    assertThat(eventually(Duration.ofSeconds(10),
        () -> subscribers(promoted, channel(waiter)) == 1))
        .as("waiter re-subscribed on the new master").isTrue();
    assertHandOffByWakeUp(holder, waiter, "handoff-after-switch");
  }

  @Test
  void aClientConnectsWhileTheFirstListedSentinelIsDown() throws Exception {
    RedisServer first = group().sentinels().get(0);
    RedisServer master = group().master();
    first.kill();
    try {
      RedisLockClient c = client(); // the URI still lists the dead sentinel first
      Lease lease = c.lock("first-sentinel-down").acquire(Duration.ofSeconds(5));
      assertThat(master.command("EXISTS", key(c, "first-sentinel-down"))).isEqualTo("1");
      assertThat(lease.release()).isTrue();
    } finally {
      first.restart();
    }
    // the restarted sentinel kept its view (its config file), so later failovers have all three
    assertThat(eventually(Duration.ofSeconds(10), () -> first.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME",
        group().masterName()).endsWith("\n" + master.port()))).isTrue();
  }

  @Test
  void clientsLeaveAMasterThatHangsWithoutDroppingTheirConnections() throws Exception {
    RedisLockClient holder = client();
    RedisLockClient waiter = client();
    assertThat(holder.lock("before-hang").tryAcquire().orElseThrow().release()).isTrue();
    RedisServer hung = group().master();

    long hungAt = System.nanoTime();
    hung.pause(); // SIGSTOP: the kernel keeps the connections open, the server answers nothing
    try {
      CompletableFuture<Long> failoverNanos = failoverFrom(hungAt);
      FirstGrantAfterFailover first = FirstGrantAfterFailover.await(holder, "after-hang-",
          FAILOVER_WAIT.plus(REACQUIRE_SLACK), hungAt);
      long reacquireMillis = first.millis();
      long failoverMillis = TimeUnit.NANOSECONDS.toMillis(failoverNanos.get(60, TimeUnit.SECONDS));
      RedisServer promoted = group().master();
      System.out.printf("[sentinel] master hung (SIGSTOP) -> sentinels agree on a new master: %d ms;"
          + " -> first acquire of a new lock by a client connected before: %d ms (%d attempts)%n",
          failoverMillis, reacquireMillis, first.attempts());

      assertThat(first.acquired()).as("acquired again after the master hung").isTrue();
      // real time is the point: the measured failover + 5 s slack for the client's timeout and reconnect
      assertThat(reacquireMillis).as("hang -> re-acquire (ms) vs failover %d ms + %d ms", failoverMillis,
          REACQUIRE_SLACK.toMillis()).isLessThan(failoverMillis + REACQUIRE_SLACK.toMillis());
      assertThat(promoted).isNotSameAs(hung);
      assertThat(promoted.command("EXISTS", key(holder, first.lease().lockName()))).isEqualTo("1");
      assertThat(first.lease().release()).isTrue();
      assertHandOffByWakeUp(holder, waiter, "handoff-after-hang");
      assertThat(subscribers(promoted, channel(waiter))).as("waiter subscribed on the new master").isEqualTo(1);
    } finally {
      hung.resume();
      RedisServer now = group().master();
      if (now != hung) { // rather than leave the next case's set-up waiting for Sentinel to demote it
        FormerMaster.demoteAsSentinelWould(hung, now, FAILOVER_WAIT);
      }
    }
  }

  @Test
  void anUnknownMasterNameFailsTheBuildAsUnavailable() {
    String uri = group().sentinelUri().replace("sentinelMasterId=" + group().masterName(), "sentinelMasterId=nope");
    assertThatThrownBy(() -> RedisLockClient.builder().uri(uri).commandTimeout(Duration.ofMillis(500)).build())
        .isInstanceOf(BackendUnavailableException.class)
        .hasMessageContaining("sentinelMasterId=nope");
  }

  // ------------------------------------------------------------------------------------------------

  private RedisLockClient client() {
    RedisLockClient c = RedisLockClient.create(group().sentinelUri());
    clients.add(c);
    return c;
  }

  /** Starts waiting for the sentinels to name a new master; completes with the time since {@code t0}. */
  private static CompletableFuture<Long> failoverFrom(long t0) {
    return CompletableFuture.supplyAsync(() -> {
      group().awaitFailover(FAILOVER_WAIT);
      return System.nanoTime() - t0;
    });
  }

  /**
   * A waiter blocked on a lock whose holder has a 30 s lease gets it in well under its 5 s backstop
   * once the holder releases: only a wake-up message can do that.
   */
  private static void assertHandOffByWakeUp(RedisLockClient holder, RedisLockClient waiter, String name)
      throws Exception {
    // each connection reconnects on its own: the waiter's command connection may still be down
    assertThat(eventually(FAILOVER_WAIT, () -> reachable(waiter))).as("waiter reconnected").isTrue();
    Lease held = holder.lock(name, LockOptions.watched(Duration.ofSeconds(30))).acquire(Duration.ofSeconds(5));
    CompletableFuture<Long> grantedAt = CompletableFuture.supplyAsync(() -> {
      try {
        Lease lease = waiter.lock(name).acquire(Duration.ofSeconds(20));
        long at = System.nanoTime();
        lease.release();
        return at;
      } catch (InterruptedException e) {
        throw new IllegalStateException(e);
      }
    });
    assertThat(eventually(Duration.ofSeconds(5),
        () -> grantedAt.isDone() || holder.inspect(name).map(i -> i.waiters() == 1).orElse(false)))
        .as("waiter registered").isTrue();
    assertThat(grantedAt).as("waiter still waiting").isNotDone();
    long releasedAt = System.nanoTime();
    assertThat(held.release()).isTrue();
    long handOffMillis = TimeUnit.NANOSECONDS.toMillis(grantedAt.get(20, TimeUnit.SECONDS) - releasedAt);
    System.out.printf("[sentinel] %s: release -> waiter granted in %d ms (backstop %d ms)%n", name,
        handOffMillis, RedisLockClient.DEFAULT_WAITER_RECHECK.toMillis());
    // real time is the point: a wake-up arrives in milliseconds, the re-check only after the 5 s backstop;
    // 1 s splits the two with room for a loaded host
    assertThat(handOffMillis).as("hand-off by wake-up (ms)").isLessThan(1_000);
  }

  private static boolean reachable(RedisLockClient c) {
    try {
      c.inspect("reachability-probe");
      return true;
    } catch (BackendUnavailableException e) {
      return false;
    }
  }

  private static String key(RedisLockClient c, String name) {
    return new RedisKeys(c.options().namespace()).lock(name);
  }

  private static String channel(RedisLockClient c) {
    return new RedisKeys(c.options().namespace()).channelPrefix() + c.clientId();
  }

  /** {@code PUBSUB NUMSUB} of one channel on one node; -1 if the node dropped the probe (reconfiguring). */
  private static int subscribers(RedisServer node, String channel) {
    try {
      String[] reply = node.command("PUBSUB", "NUMSUB", channel).split("\n");
      return Integer.parseInt(reply[reply.length - 1].trim());
    } catch (java.io.UncheckedIOException droppedWhileReconfiguring) {
      return -1;
    }
  }

  private static RedisServer runningSentinel() {
    return group().sentinels().stream().filter(RedisServer::isRunning).findFirst().orElseThrow();
  }
}
