package io.locksmith.redis;

import static io.locksmith.tck.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.BackendUnavailableException;
import io.locksmith.Lease;
import io.locksmith.testkit.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Opt-in replica acknowledgement on a real master with two real replicas. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisReplicaAckTest {
  private static RedisServer master;
  private static List<RedisServer> replicas;

  @BeforeAll
  static void startMasterAndReplicas() throws Exception {
    master = RedisServer.start();
    replicas = List.of(RedisServer.start(), RedisServer.start());
    for (RedisServer r : replicas) {
      r.command("REPLICAOF", master.host(), Integer.toString(master.port()));
    }
    assertThat(eventually(Duration.ofSeconds(20),
        () -> master.command("INFO", "replication").contains("connected_slaves:2")
            && replicas.stream().allMatch(r -> r.command("INFO", "replication")
                .contains("master_link_status:up")))).as("replication is up").isTrue();
  }

  @AfterAll
  static void stop() {
    if (replicas != null) {
      replicas.forEach(RedisServer::close);
    }
    if (master != null) {
      master.close();
    }
  }

  @AfterEach
  void resumeReplicas() {
    replicas.forEach(RedisServer::resume);
  }

  /**
   * The wait of an acquisition whose acknowledgement cannot come (replicas paused): it retries until this
   * deadline and then fails. Only its length is spent; 1 s still covers several 300 ms attempts.
   */
  private static final Duration UNACKED_WAIT = Duration.ofSeconds(1);

  private static RedisLockClient client(ReplicaAckPolicy policy) {
    return RedisLockClient.builder().uri(master.uri())
        .replicaAcknowledgement(2, Duration.ofMillis(300), policy).build();
  }

  @Test
  void aGrantBothReplicasConfirmedSaysSo() throws Exception {
    try (RedisLockClient locks = client(ReplicaAckPolicy.REQUIRE)) {
      Lease lease = locks.lock("acked").acquire(Duration.ofSeconds(5));
      assertThat(lease.replicasAcknowledged()).isEqualTo(OptionalInt.of(2));
      lease.release();
    }
  }

  @Test
  void requiredAcknowledgementThatDoesNotComeFailsTheAcquisitionAndReleasesTheGrant() throws Exception {
    try (RedisLockClient locks = client(ReplicaAckPolicy.REQUIRE)) {
      replicas.forEach(RedisServer::pause);
      assertThatThrownBy(() -> locks.lock("unacked").acquire(UNACKED_WAIT))
          .isInstanceOf(BackendUnavailableException.class)
          .hasMessageContaining("only 0 of 2 required replicas confirmed it");
      assertThat(master.command("EXISTS", "locksmith:lock:{unacked}")).as("grant released").isEqualTo("0");
    }
  }

  @Test
  void reportedAcknowledgementKeepsTheGrantAndTellsHowManyConfirmed() throws Exception {
    try (RedisLockClient locks = client(ReplicaAckPolicy.REPORT)) {
      replicas.get(1).pause();
      Lease lease = locks.lock("half-acked").acquire(Duration.ofSeconds(5));
      assertThat(lease.isHeld()).isTrue();
      assertThat(lease.replicasAcknowledged()).isEqualTo(OptionalInt.of(1));
      lease.release();
    }
  }

  @Test
  void grantsOfEveryLockKindAreConfirmedAndGivenBackTheSameWay() throws Exception {
    try (RedisLockClient locks = client(ReplicaAckPolicy.REQUIRE)) {
      Lease fair = locks.fairLock("fair-acked").acquire(Duration.ofSeconds(5));
      Lease permit = locks.semaphore("sem-acked", 1).acquire(Duration.ofSeconds(5));
      Lease write = locks.readWriteLock("rw-acked").writeLock().acquire(Duration.ofSeconds(5));
      assertThat(List.of(fair, permit, write))
          .allSatisfy(l -> assertThat(l.replicasAcknowledged()).isEqualTo(OptionalInt.of(2)));
      fair.release();
      permit.release();
      write.release();
      replicas.forEach(RedisServer::pause);
      assertThatThrownBy(() -> locks.fairLock("fair-unacked").acquire(UNACKED_WAIT))
          .isInstanceOf(BackendUnavailableException.class).hasMessageContaining("only 0 of 2");
      assertThatThrownBy(() -> locks.semaphore("sem-unacked", 1).acquire(UNACKED_WAIT))
          .isInstanceOf(BackendUnavailableException.class).hasMessageContaining("only 0 of 2");
      assertThatThrownBy(() -> locks.readWriteLock("rw-unacked").readLock().acquire(UNACKED_WAIT))
          .isInstanceOf(BackendUnavailableException.class).hasMessageContaining("only 0 of 2");
      assertThat(master.command("EXISTS", "locksmith:fair:{fair-unacked}")).as("fair grant released")
          .isEqualTo("0");
      assertThat(master.command("ZCARD", "locksmith:sem:{sem-unacked}:holders")).as("permit returned")
          .isEqualTo("0");
    }
  }

  @Test
  void withoutTheOptionNothingIsAskedOrReported() throws Exception {
    try (RedisLockClient locks = RedisLockClient.create(master.uri())) {
      Lease lease = locks.lock("plain").acquire(Duration.ofSeconds(5));
      assertThat(lease.replicasAcknowledged()).isEmpty();
      lease.release();
    }
  }

  @Test
  void badSettingsAreRejectedAtBuild() {
    assertThatThrownBy(() -> RedisLockClient.builder().uri(master.uri())
        .replicaAcknowledgement(0, Duration.ofMillis(100), ReplicaAckPolicy.REQUIRE).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least 1 replica");
    assertThatThrownBy(() -> RedisLockClient.builder().uri(master.uri()).commandTimeout(Duration.ofSeconds(1))
        .replicaAcknowledgement(1, Duration.ofSeconds(1), ReplicaAckPolicy.REPORT).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("shorter than the command timeout");
    assertThatThrownBy(() -> RedisLockClient.builder().uri(master.uri())
        .replicaAcknowledgement(1, Duration.ofMillis(100), null).build())
        .isInstanceOf(NullPointerException.class);
  }
}
