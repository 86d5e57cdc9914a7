package io.locksmith.injvm;

import io.locksmith.LockInfo;
import io.locksmith.spi.AcquireMode;
import io.locksmith.spi.AcquireReply;
import io.locksmith.spi.LockOps;
import io.locksmith.spi.RenewRequest;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/** Test decorator: forwards every operation to {@code target}; a test overrides the ones it watches or faults. */
class ForwardingLockOps implements LockOps {
  final LockOps target;

  ForwardingLockOps(LockOps target) {
    this.target = target;
  }

  @Override
  public CompletionStage<AcquireReply> acquire(String name, String owner, long leaseMillis, AcquireMode mode,
      String waiterId) {
    return target.acquire(name, owner, leaseMillis, mode, waiterId);
  }

  @Override
  public CompletionStage<Integer> release(String name, String owner, boolean all) {
    return target.release(name, owner, all);
  }

  @Override
  public CompletionStage<List<Boolean>> renew(List<RenewRequest> requests) {
    return target.renew(requests);
  }

  @Override
  public void cancelWait(String name, String waiterId) {
    target.cancelWait(name, waiterId);
  }

  @Override
  public void passWakeup(String name, String goneWaiterId) {
    target.passWakeup(name, goneWaiterId);
  }

  @Override
  public CompletionStage<Optional<LockInfo>> inspect(String name) {
    return target.inspect(name);
  }

  @Override
  public CompletionStage<Boolean> forceUnlock(String name) {
    return target.forceUnlock(name);
  }
}
