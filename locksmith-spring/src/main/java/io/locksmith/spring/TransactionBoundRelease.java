package io.locksmith.spring;

import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.util.ClassUtils;

/**
 * Defers the release of a synchronous {@link DistributedLock} call to the end of a transaction that is
 * still open when the call returns: the caller's transaction, which the method joined (or a transaction
 * advisor ordered outside the lock). Released at once, the lock would be free while the method's writes
 * are not yet committed, and another instance could read the old rows under it. Thread-bound
 * transactions only (Spring's {@code TransactionSynchronizationManager}); the release then runs in
 * {@code afterCompletion}, on the transaction's own thread, after commit or rollback. Stateless.
 */
final class TransactionBoundRelease {

  private static final boolean TX = ClassUtils.isPresent(
      "org.springframework.transaction.support.TransactionSynchronizationManager", TransactionBoundRelease.class.getClassLoader());

  private TransactionBoundRelease() {}

  /**
   * Registers the release to run after the current thread's transaction completes, if one is open.
   *
   * @param release what ends the hold; must not throw
   * @return true when deferred, false when the caller must release now
   */
  static boolean deferred(Runnable release) {
    return TX && Tx.deferred(release);
  }

  /** Loaded only when spring-tx is present. */
  private static final class Tx {
    static boolean deferred(Runnable release) {
      if (!TransactionSynchronizationManager.isSynchronizationActive()
          || !TransactionSynchronizationManager.isActualTransactionActive()) {
        return false;
      }
      TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
        @Override
        public void afterCompletion(int status) {
          release.run();
        }
      });
      return true;
    }
  }
}
