package io.locksmith.tck;

import io.locksmith.LockClient;
import io.locksmith.injvm.InJvmLockServer;

/** The read-write lock contract against the in-JVM reference backend. */
class InJvmWriteLockTckTest extends WriteLockTck {
  private final InJvmLockServer server = new InJvmLockServer();

  @Override
  protected LockClient newClient() {
    return server.newClient();
  }
}
