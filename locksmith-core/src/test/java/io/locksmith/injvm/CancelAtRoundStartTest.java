package io.locksmith.injvm;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.ClientOptions;
import io.locksmith.Lease;
import io.locksmith.LockClient;
import io.locksmith.LockInfo;
import io.locksmith.internal.DefaultLockClient;
import io.locksmith.spi.AcquireMode;
import io.locksmith.spi.AcquireReply;
import io.locksmith.spi.LockOps;
import io.locksmith.spi.Primitive;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A cancellation that lands while an acquisition is starting a new round: after the round checked that
 * the acquisition is still wanted, before its attempt reached the backend. The interleaving is forced
 * with a gate inside the waiter's {@code acquire} (the in-JVM backend underneath is the real one).
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class CancelAtRoundStartTest {

  /** Holds the next write-side acquire at its start until told to go on. */
  private static final class Gate {
    final AtomicBoolean armed = new AtomicBoolean();
    final CountDownLatch parked = new CountDownLatch(1);
    final CountDownLatch proceed = new CountDownLatch(1);

    void passThrough() {
      if (armed.compareAndSet(true, false)) {
        parked.countDown();
        try {
          if (!proceed.await(20, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the test never opened the gate");
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException(e);
        }
      }
    }
  }

  /** Forwards every operation to {@code target}, passing acquires through the gate first. */
  private static final class GatedOps extends ForwardingLockOps {
    final Gate gate;

    GatedOps(LockOps target, Gate gate) {
      super(target);
      this.gate = gate;
    }

    @Override
    public CompletionStage<AcquireReply> acquire(String name, String owner, long leaseMillis, AcquireMode mode,
        String waiterId) {
      gate.passThrough();
      return super.acquire(name, owner, leaseMillis, mode, waiterId);
    }

  }

  /** The in-JVM backend with the write side of read-write locks gated. */
  private static final class GatedBackend extends ForwardingBackend {
    private final Gate gate;

    GatedBackend(InJvmBackend backend, Gate gate) {
      super(backend);
      this.gate = gate;
    }

    @Override
    public LockOps ops(Primitive primitive) {
      return primitive == Primitive.WRITE ? new GatedOps(backend.ops(primitive), gate) : backend.ops(primitive);
    }
  }


  /**
   * Regression (issue 12 item 9): the round used to be published only after its attempt was sent, so a
   * cancellation in between cancelled the previous, finished round's registration and the new attempt
   * registered the waiter again, for nobody; as a waiting writer it kept every new reader out.
   */
  @Test
  void aCancelLandingWhileANewRoundStartsLeavesNoWaiterRegistered() throws Exception {
    InJvmLockServer server = new InJvmLockServer();
    Gate gate = new Gate();
    String name = "cancel-at-round-start";
    Thread releasing = null;
    try (LockClient holder = server.newClient(); LockClient readers = server.newClient();
        LockClient waiter = new DefaultLockClient(new GatedBackend(new InJvmBackend(server), gate),
            ClientOptions.defaults())) {
      Lease write = holder.readWriteLock(name).writeLock().acquire();
      CompletableFuture<Lease> waiting = waiter.readWriteLock(name).writeLock()
          .acquireAsync(Duration.ofSeconds(30)).toCompletableFuture();
      assertThat(waiters(readers, name)).as("the writer waits, registered").isEqualTo(1);

      gate.armed.set(true);
      // The release wakes the waiting writer on the releasing thread (in-JVM wake-ups are delivered
      // synchronously); its next round stops in the gate, after its "still wanted?" check.
      releasing = new Thread(write::release, "releasing-holder");
      releasing.start();
      assertThat(gate.parked.await(10, TimeUnit.SECONDS)).as("the new round started").isTrue();
      // free meanwhile: another writer may take it before the woken one arrives (the woken writer keeps
      // its place, so a reader could not)
      Lease other = holder.readWriteLock(name).writeLock().tryAcquire().orElseThrow();
      assertThat(waiting.cancel(false)).isTrue(); // the acquisition is finished when cancel returns
      gate.proceed.countDown();
      releasing.join(10_000);
      assertThat(releasing.isAlive()).isFalse();
      // the gated round ran to its end on the releasing thread: refused (a writer holds), so registered

      assertThat(waiters(readers, name)).as("waiters registered after the cancelled writer's last round")
          .isZero();
      other.release();
      Optional<Lease> another = readers.readWriteLock(name).readLock().tryAcquire();
      assertThat(another).as("a new reader is not kept out by a writer that gave up").isPresent();
      another.get().release();
    } finally {
      gate.proceed.countDown();
      if (releasing != null) {
        releasing.join(10_000);
      }
    }
  }

  private static int waiters(LockClient client, String name) {
    return client.readWriteLock(name).readLock().inspect().map(LockInfo::waiters)
        .or(() -> client.readWriteLock(name).writeLock().inspect().map(LockInfo::waiters))
        .orElse(0);
  }
}
