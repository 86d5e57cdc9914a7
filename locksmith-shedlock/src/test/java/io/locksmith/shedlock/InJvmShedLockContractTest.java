package io.locksmith.shedlock;

import io.locksmith.LockClient;
import io.locksmith.injvm.InJvmLockServer;
import org.junit.jupiter.api.AfterAll;

/** ShedLock's own provider contract, unmodified, on the in-JVM lock server. */
class InJvmShedLockContractTest extends LocksmithShedLockContract {
  private static final InJvmLockServer SERVER = new InJvmLockServer();
  private static final LockClient JOBS = SERVER.newClient();
  private static final LockClient OPERATOR = SERVER.newClient();
  private static final LocksmithLockProvider PROVIDER = new LocksmithLockProvider(JOBS);

  @AfterAll
  static void close() {
    PROVIDER.close();
    JOBS.close();
    OPERATOR.close();
  }

  @Override
  LocksmithLockProvider provider() {
    return PROVIDER;
  }

  @Override
  LockClient operator() {
    return OPERATOR;
  }
}
