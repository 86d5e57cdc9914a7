package io.locksmith.tck;

import io.locksmith.LockClient;
import io.locksmith.injvm.InJvmLockServer;

/** The TCK against the in-JVM reference backend: two clients of one in-JVM server. */
class InJvmLockTckTest extends LockClientTck {
  private final InJvmLockServer server = new InJvmLockServer();

  @Override
  protected LockClient newClient() {
    return server.newClient();
  }
}
