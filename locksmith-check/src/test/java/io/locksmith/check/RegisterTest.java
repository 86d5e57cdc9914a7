package io.locksmith.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The register's victim choice, which the pause faults rely on. */
@Tag("unit")
class RegisterTest {

  /**
   * Two reads of different locks that both find the victim armed (the barrier holds each inside the
   * check until the other is there too): exactly one becomes the victim and waits for its release; the
   * other gets its reply at once. A second victim would wait with nobody to release it, stalling every
   * client of its JVM while they hold their locks.
   */
  @Test
  @Timeout(30)
  void twoReadsThatSeeTheVictimArmedAtOnceMakeOneVictim() throws Exception {
    Register register = new Register(false, new History(), 5, 5);
    CyclicBarrier bothChecking = new CyclicBarrier(2);
    CompletableFuture<Register.Chosen> chosen = register.chooseVictim(client -> {
      try {
        bothChecking.await(5, TimeUnit.SECONDS);
      } catch (Exception e) {
        throw new IllegalStateException("the other read never reached the victim check", e);
      }
      return true;
    }, 400, true);

    ExecutorService readers = Executors.newFixedThreadPool(2); // one per child JVM's reader, as in a run
    try {
      CompletableFuture<Register.ReadResult> a =
          CompletableFuture.supplyAsync(() -> register.read("a", "lock-0", 1), readers);
      CompletableFuture<Register.ReadResult> b =
          CompletableFuture.supplyAsync(() -> register.read("b", "lock-1", 1), readers);

      Register.Chosen victim = chosen.get(10, TimeUnit.SECONDS);
      CompletableFuture<Register.ReadResult> victimRead = victim.client().equals("a") ? a : b;
      CompletableFuture<Register.ReadResult> otherRead = victim.client().equals("a") ? b : a;
      assertThat(otherRead.get(5, TimeUnit.SECONDS).thinkMillis()).as("the other read is not held").isEqualTo(5);
      assertThat(victimRead).as("the victim's read waits for its release").isNotDone();
      victim.release();
      assertThat(victimRead.get(5, TimeUnit.SECONDS).thinkMillis()).isEqualTo(400);
    } finally {
      readers.shutdownNow();
    }
  }
}
