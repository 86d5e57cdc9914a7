package io.locksmith.tck;

import io.locksmith.LockClient;
import io.locksmith.injvm.InJvmLockServer;

/** The multi-lock contract against the in-JVM reference backend: clients of one in-JVM server. */
class InJvmMultiLockTckTest extends MultiLockTck {
  private final InJvmLockServer server = new InJvmLockServer();

  @Override
  protected LockClient newClient() {
    return server.newClient();
  }
}
