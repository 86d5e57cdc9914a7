package io.locksmith.redis;

import static io.locksmith.redis.RedisClusterTest.acquireLater;
import static io.locksmith.redis.RedisClusterTest.key;
import static io.locksmith.redis.RedisClusterTest.nameOn;
import static io.locksmith.tck.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.BackendUnavailableException;
import io.locksmith.Lease;
import io.locksmith.LeaseState;
import io.locksmith.LockInfo;
import io.locksmith.LockOptions;
import io.locksmith.testkit.RedisCluster;
import io.locksmith.testkit.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Failovers of a real Redis Cluster under clients connected before them: a master crash ({@code
 * SIGKILL}, its replica takes over after {@code cluster-node-timeout}) and a manual {@code CLUSTER
 * FAILOVER} (the old master becomes a replica and answers {@code MOVED}). Each test has a cluster of
 * its own, since both change the topology for good.
 *
 * <p>Figures are printed to stdout with the prefix {@code [cluster]}.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class RedisClusterFailoverTest {
  private static final Duration FAILOVER_WAIT = Duration.ofSeconds(40);
  /** What a client may need beyond the failover itself to work on the promoted replica. */
  private static final Duration REACQUIRE_SLACK = Duration.ofSeconds(5);

  private RedisCluster cluster;
  private final List<RedisLockClient> clients = new ArrayList<>();

  @BeforeEach
  void startCluster() {
    cluster = RedisCluster.start();
  }

  @AfterEach
  void stop() {
    clients.forEach(RedisLockClient::close);
    clients.clear();
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void aMasterCrashLeavesNoWaiterStuckAndNoLeaseSilentlyHeld() throws Exception {
    RedisLockClient holder = client();
    RedisLockClient waiter = client();
    RedisServer victim = cluster.masters().get(0);
    RedisServer healthy = cluster.masters().get(1);
    String contendedHere = nameOn(cluster, holder, healthy, "contended-healthy-");
    String contendedThere = nameOn(cluster, holder, victim, "contended-victim-");
    // a 1 s lease cannot outlive the outage; a 20 s lease can, if its grant reached the replica
    Lease brief = holder.lock(nameOn(cluster, holder, victim, "brief-"), LockOptions.watched(Duration.ofSeconds(1)))
        .acquire(Duration.ofSeconds(5));
    Lease longer = holder.lock(nameOn(cluster, holder, victim, "long-"), LockOptions.watched(Duration.ofSeconds(20)))
        .acquire(Duration.ofSeconds(5));
    Lease dropped = holder.lock(nameOn(cluster, holder, victim, "dropped-"),
        LockOptions.watched(Duration.ofSeconds(20))).acquire(Duration.ofSeconds(5));
    LeaseHistory briefHistory = LeaseHistory.of(brief);
    LeaseHistory longHistory = LeaseHistory.of(longer);
    LeaseHistory droppedHistory = LeaseHistory.of(dropped);
    Lease heldHere = holder.lock(contendedHere, LockOptions.watched(Duration.ofSeconds(30))).acquire(Duration.ofSeconds(5));
    Lease heldThere = holder.lock(contendedThere, LockOptions.watched(Duration.ofSeconds(30)))
        .acquire(Duration.ofSeconds(5));
    CompletableFuture<Long> waitHere = acquireLater(waiter, contendedHere, Duration.ofSeconds(60));
    CompletableFuture<Long> waitThere = acquireLater(waiter, contendedThere, Duration.ofSeconds(60));
    for (String name : List.of(contendedHere, contendedThere)) {
      assertThat(eventually(Duration.ofSeconds(5), () -> holder.inspect(name).map(i -> i.waiters() == 1)
          .orElse(false))).as("waiter of %s registered", name).isTrue();
    }

    long crashedAt = System.nanoTime();
    cluster.killMaster(victim);
    CompletableFuture<RedisServer> promotedLater = CompletableFuture.supplyAsync(
        () -> cluster.awaitFailover(FAILOVER_WAIT));

    // a lock on a healthy master is handed over during the outage, whichever node the waiter listens on
    long releasedHereAt = System.nanoTime();
    assertThat(heldHere.release()).isTrue();
    long handOffHereMillis = TimeUnit.NANOSECONDS.toMillis(waitHere.get(15, TimeUnit.SECONDS) - releasedHereAt);

    // clients acquire again in the crashed master's slots once the replica has taken over
    AtomicInteger attempts = new AtomicInteger();
    AtomicReference<Lease> first = new AtomicReference<>();
    boolean reacquired = eventually(FAILOVER_WAIT.plus(REACQUIRE_SLACK), () -> {
      try {
        Optional<Lease> lease = holder.lock(nameOn(cluster, holder, victimSlotsOwner(victim),
            "after-crash-" + attempts.incrementAndGet() + "-")).tryAcquire();
        lease.ifPresent(first::set);
        return lease.isPresent();
      } catch (BackendUnavailableException | IllegalStateException notYet) {
        return false;
      }
    });
    long reacquireMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - crashedAt);
    RedisServer promoted = promotedLater.get(60, TimeUnit.SECONDS);
    long failoverMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - crashedAt);
    assertThat(reacquired).as("acquired again after the crash").isTrue();
    assertThat(reacquireMillis).as("crash -> re-acquire (ms), failover took at most %d ms", failoverMillis)
        .isLessThan(failoverMillis + REACQUIRE_SLACK.toMillis());
    assertThat(promoted.command("EXISTS", key(holder, first.get().lockName()))).isEqualTo("1");
    assertThat(first.get().release()).isTrue();

    // the waiter on the crashed master's lock is not stuck: granted after the release (its wait rides out
    // the outage), or failed closed if the failover outlasted its wait, and then the lock can be acquired again
    assertThat(eventually(REACQUIRE_SLACK, () -> reachable(holder, contendedThere))).isTrue();
    heldThere.release();
    String waiterThere;
    try {
      waitThere.get(RedisLockClient.DEFAULT_WAITER_RECHECK.toMillis() + 5_000, TimeUnit.MILLISECONDS);
      waiterThere = "granted";
    } catch (ExecutionException e) {
      assertThat(e).hasCauseInstanceOf(BackendUnavailableException.class);
      waiterThere = "failed closed: " + e.getCause().getClass().getSimpleName();
      // each client refreshes its own slot map (adaptive, or every 5 s)
      assertThat(eventually(REACQUIRE_SLACK, () -> reachable(waiter, contendedThere))).isTrue();
      assertThat(waiter.lock(contendedThere).acquire(Duration.ofSeconds(10)).release()).isTrue();
    }

    // the 20 s lease whose key we drop on the promoted replica (as if its grant had never been replicated)
    // must notice at its next renewal
    assertThat(eventually(REACQUIRE_SLACK, () -> reachable(holder, dropped.lockName()))).isTrue();
    long droppedAt = System.nanoTime();
    promoted.command("DEL", key(holder, dropped.lockName()));
    assertThat(droppedHistory.lost.await(20 / 3 + 5, TimeUnit.SECONDS)).as("dropped lease LOST").isTrue();
    long droppedLostMillis = TimeUnit.NANOSECONDS.toMillis(droppedHistory.lostAt() - droppedAt);

    assertThat(briefHistory.lost.await(5, TimeUnit.SECONDS)).as("1 s lease LOST").isTrue();
    // the 20 s lease: a renewal sent after the failover decides
    long from = System.nanoTime();
    long validityEnd = longer.remainingValidity().toNanos();
    assertThat(eventually(Duration.ofSeconds(20), () -> longer.state() == LeaseState.LOST
        || System.nanoTime() - from + longer.remainingValidity().toNanos() > validityEnd + 100_000_000L))
        .as("a renewal after the failover was answered").isTrue();
    LeaseState longState = longer.state();
    String longKey = promoted.command("EXISTS", key(holder, longer.lockName()));
    System.out.printf("[cluster] crash -> replica promoted within %d ms; -> first acquire in its slots %d ms"
        + " (%d attempts); hand-off on a healthy master during the outage %d ms; waiter on the crashed master's"
        + " lock %s; 1 s lease %s; 20 s lease %s (key on promoted: %s); dropped key -> LOST in %d ms (%s)%n",
        failoverMillis, reacquireMillis, attempts.get(), handOffHereMillis, waiterThere, briefHistory,
        longHistory, longKey, droppedLostMillis, droppedHistory);

    // if the waiter's pub/sub connection was on the crashed node, the message was lost; the re-check after
    // it subscribes again elsewhere (reconnect backoff <= 1 s) replaces the 5 s backstop
    assertThat(handOffHereMillis).as("hand-off on a healthy master (ms)").isLessThan(3_000);
    assertThat(brief.state()).isEqualTo(LeaseState.LOST);
    briefHistory.assertNeverHeldAfterDoubt();
    droppedHistory.assertNeverHeldAfterDoubt();
    assertThat(dropped.release()).isFalse();
    if (longState == LeaseState.HELD) {
      assertThat(longKey).isEqualTo("1");
      Optional<LockInfo> info = waiter.inspect(longer.lockName());
      assertThat(info).hasValueSatisfying(i -> {
        assertThat(i.owner()).startsWith(holder.clientId() + ":");
        assertThat(i.fencingToken()).isEqualTo(longer.fencingToken());
      });
      assertThat(longer.release()).isTrue();
    } else {
      assertThat(longState).isEqualTo(LeaseState.LOST);
      longHistory.assertNeverHeldAfterDoubt();
    }
  }

  @Test
  void aManualFailoverMovesClientsToThePromotedReplica() throws Exception {
    RedisLockClient holder = client();
    RedisLockClient waiter = client();
    RedisServer demoted = cluster.masters().get(2);
    String name = nameOn(cluster, holder, demoted, "switch-");
    Lease before = holder.lock(name, LockOptions.watched(Duration.ofSeconds(30))).acquire(Duration.ofSeconds(5));
    RedisServer replica = cluster.replicasOf(demoted).get(0);

    long switchedAt = System.nanoTime();
    cluster.failover(replica); // coordinated: the replica has every write of the master before it takes over
    long failoverMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - switchedAt);

    // the lease survives: its key was replicated, and its renewals follow MOVED to the promoted replica
    assertThat(eventually(REACQUIRE_SLACK, () -> reachable(holder, name))).isTrue();
    assertThat(waiter.lock(name).tryAcquire()).as("still exclusive after the switch").isEmpty();
    assertThat(replica.command("EXISTS", key(holder, name))).isEqualTo("1");
    CompletableFuture<Long> grantedAt = acquireLater(waiter, name, Duration.ofSeconds(30));
    assertThat(eventually(Duration.ofSeconds(5), () -> holder.inspect(name).map(i -> i.waiters() == 1)
        .orElse(false))).as("waiter registered on the promoted replica").isTrue();
    assertThat(before.state()).isEqualTo(LeaseState.HELD);
    long releasedAt = System.nanoTime();
    assertThat(before.release()).isTrue();
    long handOffMillis = TimeUnit.NANOSECONDS.toMillis(grantedAt.get(10, TimeUnit.SECONDS) - releasedAt);
    System.out.printf("[cluster] CLUSTER FAILOVER took %d ms; hand-off after it %d ms%n", failoverMillis,
        handOffMillis);
    assertThat(handOffMillis).as("hand-off by wake-up (ms)").isLessThan(1_000);
  }

  // ------------------------------------------------------------------------------------------------

  private RedisLockClient client() {
    RedisLockClient c = RedisLockClient.create(cluster.seedUri().replace("redis://", "redis-cluster://"));
    clients.add(c);
    return c;
  }

  /** The node that owns the crashed master's slots now (the crashed master itself until the failover). */
  private RedisServer victimSlotsOwner(RedisServer victim) {
    RedisServer owner = cluster.masterForSlot(0); // the first master's range starts at slot 0
    if (owner == victim || !owner.isRunning()) {
      throw new IllegalStateException("no failover yet");
    }
    return owner;
  }

  private static boolean reachable(RedisLockClient c, String name) {
    try {
      c.inspect(name);
      return true;
    } catch (BackendUnavailableException e) {
      return false;
    }
  }
}
