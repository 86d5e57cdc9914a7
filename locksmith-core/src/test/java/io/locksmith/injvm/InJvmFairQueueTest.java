package io.locksmith.injvm;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.ClientOptions;
import io.locksmith.Lease;
import io.locksmith.LockClient;
import io.locksmith.spi.AcquireMode;
import io.locksmith.spi.BackendContext;
import io.locksmith.spi.Primitive;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The in-JVM fair queue when the waiter at its head is gone. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class InJvmFairQueueTest {

  /**
   * Regression: a woken head stays queued until it is granted, so a wake-up that found its waiter gone
   * used to be passed straight back to it, and {@code release()} never returned (the clock stands still).
   */
  @Test
  void aReleaseWhoseWakeUpFindsTheHeadGoneReturnsAndRemovesIt() throws Exception {
    AtomicLong now = new AtomicLong(1_000_000_000L);
    InJvmLockServer server = new InJvmLockServer(now::get);
    try (LockClient a = server.newClient(ClientOptions.builder().ticker(now::get).build())) {
      Lease held = a.fairLock("f").tryAcquire().orElseThrow();
      InJvmBackend other = new InJvmBackend(server);
      AtomicLong delivered = new AtomicLong();
      other.open(new BackendContext("other", ClientOptions.defaults().namespace(), (name, waiter) -> {
        delivered.incrementAndGet();
        return false; // this client's waiter is gone
      }));
      other.ops(Primitive.FAIR).acquire("f", "other:1", 30_000, AcquireMode.NEW, "other:w1");
      assertThat(a.fairLock("f").inspect().orElseThrow().waiters()).isEqualTo(1);

      CompletableFuture.runAsync(held::release).get(5, TimeUnit.SECONDS);

      assertThat(delivered.get()).as("the gone head was woken once").isEqualTo(1);
      assertThat(a.fairLock("f").tryAcquire()).as("nobody is queued any more").isPresent();
    }
  }
}
