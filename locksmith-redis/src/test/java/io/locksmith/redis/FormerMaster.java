package io.locksmith.redis;

import static io.locksmith.tck.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.testkit.RedisServer;
import java.io.UncheckedIOException;
import java.time.Duration;

/** A Sentinel master that was failed over while still running (demoted manually, or paused and resumed). */
final class FormerMaster {
  private FormerMaster() {}

  /**
   * Does what Sentinel does to a former master that reports itself master again ({@code
   * +convert-to-slave}: {@code REPLICAOF} the new master, then drop its normal and pub/sub clients), at
   * once. Sentinel waits 8 s after it first sees that role and reads a replica's role only every 10 s:
   * 8 to 20 s per case, spent in the test or in the next one's set-up, without changing what clients go
   * through. Sentinel may still send its own {@code REPLICAOF} later; the same one again is a no-op.
   *
   * @param former the node to demote; it must be running (resumed, if it was paused)
   * @param promoted the master the sentinels name now
   * @param within failure deadline for the node to report the replica role
   */
  static void demoteAsSentinelWould(RedisServer former, RedisServer promoted, Duration within)
      throws InterruptedException {
    former.command("REPLICAOF", promoted.host(), Integer.toString(promoted.port()));
    former.command("CLIENT", "KILL", "TYPE", "normal"); // SKIPME yes: this probe's own connection stays
    former.command("CLIENT", "KILL", "TYPE", "pubsub");
    assertThat(eventually(within, () -> {
      try {
        return former.command("ROLE").startsWith("slave");
      } catch (UncheckedIOException droppedWhileDemoting) {
        return false; // Sentinel's own demotion may drop this probe's connection too
      }
    })).as("former master %s demoted", former).isTrue();
  }
}
