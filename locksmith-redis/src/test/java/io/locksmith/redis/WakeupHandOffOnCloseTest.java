package io.locksmith.redis;

import static io.locksmith.tck.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.Lease;
import io.locksmith.LeaseSource;
import io.locksmith.LockClient;
import io.locksmith.LockOptions;
import io.locksmith.testkit.RedisServer;
import io.locksmith.testkit.RedisServerExtension;
import io.locksmith.testkit.TcpProxy;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A wake-up that reaches a client while it closes is passed on to the next waiter, another client's
 * (issue 12, item 4): every rolling restart with queued waiters closes clients while holders release.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class WakeupHandOffOnCloseTest {
  private static final LockOptions LONG = LockOptions.watched(Duration.ofSeconds(30));
  /** Each way between the closing client and Redis: keeps its close open while the wake-up travels. */
  private static final Duration ONE_WAY = Duration.ofMillis(300);

  @RegisterExtension
  static final RedisServerExtension REDIS = new RedisServerExtension();

  /** The lock kinds whose waiters are woken one at a time and popped from the queue by the wake-up. */
  enum Kind {
    EXCLUSIVE {
      @Override
      LeaseSource holder(LockClient c, String name) {
        return c.lock(name, LONG);
      }

      @Override
      LeaseSource waiter(LockClient c, String name) {
        return c.lock(name, LONG);
      }
    },
    SEMAPHORE {
      @Override
      LeaseSource holder(LockClient c, String name) {
        return c.semaphore(name, 1, LONG);
      }

      @Override
      LeaseSource waiter(LockClient c, String name) {
        return c.semaphore(name, 1, LONG);
      }
    },
    /** Readers waiting for a writer. */
    READ_WRITE {
      @Override
      LeaseSource holder(LockClient c, String name) {
        return c.readWriteLock(name, LONG).writeLock();
      }

      @Override
      LeaseSource waiter(LockClient c, String name) {
        return c.readWriteLock(name, LONG).readLock();
      }
    };

    abstract LeaseSource holder(LockClient c, String name);

    abstract LeaseSource waiter(LockClient c, String name);
  }

  /**
   * Regression: client A's queued waiter is first in line, B's second. A closes; the holder releases; the
   * server wakes A's waiter, and A, already closing, reported the wake-up as taken, so B slept until its
   * backstop (waiter re-check, 5 s by default: seen 4.75 s instead of well under a second).
   */
  @ParameterizedTest
  @EnumSource(Kind.class)
  void aWakeUpReachingAClosingClientIsPassedToTheNextClientsWaiter(Kind kind) throws Exception {
    RedisServer server = REDIS.server();
    String name = "handoff-on-close-" + kind;
    try (TcpProxy proxy = TcpProxy.start(server.host(), server.port());
        RedisLockClient holder = RedisLockClient.create(server.uri());
        RedisLockClient b = RedisLockClient.create(server.uri())) {
      RedisLockClient a = RedisLockClient.create("redis://" + proxy.host() + ":" + proxy.port());
      CompletableFuture<Void> closing = null;
      try {
        // a lease of A's that its close must release: the close stays open for a round trip through the proxy
        a.lock(name + "-other", LONG).acquire();
        Lease held = kind.holder(holder, name).acquire();
        proxy.delay(ONE_WAY);
        CompletableFuture<Lease> aWaits = kind.waiter(a, name).acquireAsync(Duration.ofSeconds(20))
            .toCompletableFuture();
        assertThat(eventually(Duration.ofSeconds(10), () -> a.backend.registeredWaiterCount() == 1))
            .as("A's waiter is registered first").isTrue();
        CompletableFuture<Lease> bWaits = kind.waiter(b, name).acquireAsync(Duration.ofSeconds(20))
            .toCompletableFuture();
        assertThat(eventually(Duration.ofSeconds(10), () -> b.backend.registeredWaiterCount() == 1))
            .as("B's waiter is registered second").isTrue();

        closing = CompletableFuture.runAsync(a::close, r -> new Thread(r, "closing-client-a").start());
        assertThatThrownBy(() -> aWaits.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
            .hasCauseInstanceOf(IllegalStateException.class);
        // A's cancellation is still on its way to the server (ONE_WAY): the release wakes A's waiter
        long releasedAt = System.nanoTime();
        assertThat(held.release()).isTrue();
        Lease next = bWaits.get(20, TimeUnit.SECONDS);
        long handOffMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - releasedAt);
        System.out.println(kind + ": release -> B acquired in " + handOffMillis + " ms");
        assertThat(handOffMillis).as("hand-off to B in ms (B's backstop is 5 s away)").isLessThan(2_000);
        next.release();
      } finally {
        if (closing != null) {
          closing.get(20, TimeUnit.SECONDS);
        }
        a.close();
      }
    }
  }
}
