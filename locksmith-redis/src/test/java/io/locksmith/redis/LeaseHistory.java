package io.locksmith.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.Lease;
import io.locksmith.LeaseListener;
import io.locksmith.LeaseState;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Collectors;

/** The state changes of one lease, with the time each was reported. */
final class LeaseHistory implements LeaseListener {
  private record Change(LeaseState to, long at) {}

  private final List<Change> changes = new CopyOnWriteArrayList<>();
  final CountDownLatch lost = new CountDownLatch(1);

  static LeaseHistory of(Lease lease) {
    LeaseHistory h = new LeaseHistory();
    lease.addListener(h);
    return h;
  }

  @Override
  public void stateChanged(Lease lease, LeaseState from, LeaseState to) {
    changes.add(new Change(to, System.nanoTime()));
    if (to == LeaseState.LOST) {
      lost.countDown();
    }
  }

  long lostAt() {
    return changes.stream().filter(c -> c.to() == LeaseState.LOST).findFirst().orElseThrow().at();
  }

  /** Once UNCERTAIN or LOST, a lease whose key is gone must never be reported HELD again. */
  void assertNeverHeldAfterDoubt() {
    boolean doubted = false;
    for (Change c : changes) {
      if (c.to() == LeaseState.UNCERTAIN || c.to() == LeaseState.LOST) {
        doubted = true;
      } else if (doubted) {
        assertThat(c.to()).as("state after UNCERTAIN/LOST in " + this).isNotEqualTo(LeaseState.HELD);
      }
    }
  }

  @Override
  public String toString() {
    return "HELD" + changes.stream().map(c -> " -> " + c.to()).collect(Collectors.joining());
  }
}
