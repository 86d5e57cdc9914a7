package io.locksmith.tck;

import io.locksmith.LockClient;
import io.locksmith.injvm.InJvmLockServer;

/** The semaphore contract against the in-JVM reference backend. */
class InJvmSemaphoreTckTest extends SemaphoreTck {
  private final InJvmLockServer server = new InJvmLockServer();

  @Override
  protected LockClient newClient() {
    return server.newClient();
  }
}
