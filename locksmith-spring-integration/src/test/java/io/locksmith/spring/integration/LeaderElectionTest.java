package io.locksmith.spring.integration;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.redis.RedisLockClient;
import io.locksmith.testkit.RedisServerExtension;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

/**
 * Leader election with Spring Integration's {@code LockRegistryLeaderInitiator} over one Locksmith registry
 * on a real Redis (compiled and run on both SI lines): two initiators, exactly one leader; the leader
 * yielding (its context revoked) or stopping hands leadership to the other; and a sampler that reads both
 * initiators' {@code Context.isLeader()} all along never sees two leaders. (The initiator clears its
 * leader flag before it unlocks and sets it after it locked, so the flags are a sound sample of the lock.)
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LeaderElectionTest {
  @RegisterExtension
  static final RedisServerExtension REDIS = new RedisServerExtension();
  /** Hang detection only: a hand-over is one release notice and one grant, milliseconds on an idle machine. */
  private static final long HAND_OVER_BOUND_SECONDS = 10;

  /** A candidate that reports its grants and keeps its context, so that the test can revoke it. */
  private static final class Elector extends DefaultCandidate {
    final LockRegistryLeaderInitiator initiator;
    final AtomicReference<Context> context = new AtomicReference<>();
    private final BlockingQueue<String> grants;

    Elector(String id, LocksmithLockRegistry registry, BlockingQueue<String> grants) {
      super(id, "leader-election-test");
      this.grants = grants;
      this.initiator = new LockRegistryLeaderInitiator(registry, this);
      // a yielding or failed leader waits this long before it competes again, while the other candidate, waiting
      // in tryLock, is granted at the release notice: the hand-over goes to the other one
      initiator.setBusyWaitMillis(500);
    }

    @Override
    public void onGranted(Context ctx) {
      context.set(ctx);
      grants.add(getId());
    }

    boolean isLeader() {
      return initiator.getContext().isLeader();
    }
  }

  @Test
  void exactlyOneLeaderWhichHandsOverWhenItYieldsOrStops() throws Exception {
    BlockingQueue<String> grants = new LinkedBlockingQueue<>();
    AtomicBoolean sampling = new AtomicBoolean(true);
    AtomicInteger mostLeadersAtOnce = new AtomicInteger();
    AtomicLong samples = new AtomicLong();
    // commands get 5 s (the default is 2 s): nothing here measures Redis's speed, and on a loaded 2-core machine the
    // first connection of a fresh server has been seen to take longer than the default's 7 s connect bound
    try (RedisLockClient client = RedisLockClient.builder().uri(REDIS.server().uri())
        .commandTimeout(Duration.ofSeconds(5)).build()) {
      LocksmithLockRegistry registry = new LocksmithLockRegistry(client);
      Elector a = new Elector("a", registry, grants);
      Elector b = new Elector("b", registry, grants);
      Thread sampler = new Thread(() -> {
        while (sampling.get()) {
          int leaders = (a.isLeader() ? 1 : 0) + (b.isLeader() ? 1 : 0);
          mostLeadersAtOnce.accumulateAndGet(leaders, Math::max);
          samples.incrementAndGet();
          // pacing, not synchronisation: some 10,000 samples a second without taking a core of the 2
          LockSupport.parkNanos(100_000);
        }
      }, "leader-sampler");
      sampler.setDaemon(true);
      sampler.start();
      try {
        a.initiator.start();
        b.initiator.start();
        String first = grants.poll(HAND_OVER_BOUND_SECONDS, TimeUnit.SECONDS);
        assertThat(first).as("a leader was elected").isIn("a", "b");
        Elector leader = first.equals("a") ? a : b;
        Elector other = leader == a ? b : a;
        assertThat(leader.isLeader()).isTrue();
        assertThat(other.isLeader()).isFalse();

        // the leader's context revoked: leadership moves to the other candidate
        leader.context.get().yield();
        assertThat(grants.poll(HAND_OVER_BOUND_SECONDS, TimeUnit.SECONDS)).as("granted after the yield")
            .isEqualTo(other.getId());
        assertThat(other.isLeader()).isTrue();

        // the new leader's process stopping: leadership moves back
        other.initiator.stop();
        assertThat(grants.poll(HAND_OVER_BOUND_SECONDS, TimeUnit.SECONDS)).as("granted after the leader stopped")
            .isEqualTo(leader.getId());
        assertThat(other.isLeader()).isFalse();
        assertThat(leader.isLeader()).isTrue();
      } finally {
        sampling.set(false);
        sampler.join(TimeUnit.SECONDS.toMillis(HAND_OVER_BOUND_SECONDS));
        for (Elector e : List.of(a, b)) {
          e.initiator.destroy();
        }
      }
      assertThat(samples.get()).as("the sampler ran").isPositive();
      assertThat(mostLeadersAtOnce.get()).as("never two leaders at once").isEqualTo(1);
      assertThat(grants).as("no further grants").isEmpty();
    }
  }
}
