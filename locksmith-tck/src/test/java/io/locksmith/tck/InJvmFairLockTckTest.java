package io.locksmith.tck;

import io.locksmith.LockClient;
import io.locksmith.injvm.InJvmLockServer;

/** The fair-lock contract against the in-JVM reference backend. */
class InJvmFairLockTckTest extends FairLockTck {
  private final InJvmLockServer server = new InJvmLockServer();

  @Override
  protected LockClient newClient() {
    return server.newClient();
  }
}
