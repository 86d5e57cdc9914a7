package io.locksmith;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/**
 * Issue 12 item 14: the interleaving that a write-only fence gets wrong, played step by step. Holder A
 * (token 1) reads, is paused past its lease; B (token 2) is granted and reads; A wakes and writes; B
 * writes. Each holder sells one item from a stock of 10.
 */
class FenceGuardAdmissionTest {
  private static final String STOCK = "stock-42";

  /** The protected data: a plain stock count that knows nothing of tokens, plus the sales recorded. */
  private static final class Store {
    int stock = 10;
    int sales;
  }

  @Test
  void aHolderPausedBetweenTheNextHoldersReadAndWriteIsRefusedAtItsWrite() {
    FenceGuard guard = new FenceGuard();
    Store store = new Store();

    FenceGuard.Admission a = guard.admit(STOCK, 1);
    int readByA = a.apply(() -> store.stock);
    // A is paused here; its lease runs out and B is granted the lock with token 2
    FenceGuard.Admission b = guard.admit(STOCK, 2);
    int readByB = b.apply(() -> store.stock);
    // A wakes up and writes what it computed from its read
    assertThatThrownBy(() -> a.run(() -> {
      store.stock = readByA - 1;
      store.sales++;
    })).isInstanceOfSatisfying(StaleTokenException.class, e -> {
      assertThat(e.token()).isEqualTo(1);
      assertThat(e.highestSeen()).isEqualTo(2);
    });
    b.run(() -> {
      store.stock = readByB - 1;
      store.sales++;
    });

    assertThat(store.sales).as("sales recorded").isEqualTo(1);
    assertThat(store.stock).as("stock left: every recorded sale took one item").isEqualTo(10 - store.sales);
    assertThat(guard.highest(STOCK)).hasValue(2);
  }

  /**
   * The recipe Locksmith used to publish, with the same guard: a plain read, and the token checked only
   * at the write. The same interleaving accepts A's stale write and loses one update. This is the
   * failure the admission above prevents.
   */
  @Test
  void theSameInterleavingWithAWriteOnlyFenceAcceptsTheStaleWriteAndLosesAnUpdate() {
    FenceGuard guard = new FenceGuard();
    Store store = new Store();

    int readByA = store.stock; // A reads without admitting its token
    int readByB = store.stock; // B is granted and reads likewise
    guard.apply(STOCK, 1, () -> { // A's stale write: token 1 is still the largest the guard has seen
      store.stock = readByA - 1;
      return ++store.sales;
    });
    guard.apply(STOCK, 2, () -> {
      store.stock = readByB - 1;
      return ++store.sales;
    });

    assertThat(store.sales).isEqualTo(2);
    assertThat(store.stock).as("two sales, but one decrement survived: an update was lost").isEqualTo(9);
  }

  @Test
  void anAdmissionStandsForItsOwnHolderAndRefusesBeforeRunningOnceSuperseded() {
    FenceGuard guard = new FenceGuard();
    FenceGuard.Admission first = guard.admit("r", 5);
    assertThat(first.resource()).isEqualTo("r");
    assertThat(first.token()).isEqualTo(5);
    assertThat(first.apply(() -> "read")).isEqualTo("read");
    assertThat(guard.admit("r", 5).apply(() -> "same holder again")).isEqualTo("same holder again");
    guard.admit("r", 6);
    boolean[] ran = {false};
    assertThatThrownBy(() -> first.run(() -> ran[0] = true)).isInstanceOf(StaleTokenException.class);
    assertThatThrownBy(() -> first.apply(() -> ran[0] = true)).isInstanceOf(StaleTokenException.class);
    assertThat(ran[0]).as("a refused action never runs").isFalse();
    assertThatThrownBy(() -> guard.admit("r", 4)).isInstanceOf(StaleTokenException.class);
    assertThatThrownBy(() -> first.run(null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> first.apply(null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> guard.admit(null, 1)).isInstanceOf(NullPointerException.class);
  }
}
