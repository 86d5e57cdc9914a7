package io.locksmith.spring.integration;

import io.locksmith.LockClient;
import io.locksmith.injvm.InJvmLockServer;
import java.time.Duration;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/** The LockRegistry contract on Locksmith's in-JVM backend: one client per registry. */
class InJvmRegistryContractTest extends LockRegistryContract {
  private final InJvmLockServer server = new InJvmLockServer();

  @Override
  RenewableLockRegistry newRegistry(Duration ttl) {
    LockClient client = closeAfter(server.newClient());
    return ttl == null ? new LocksmithLockRegistry(client)
        : LocksmithLockRegistry.builder(client).fixedLease(ttl).build();
  }
}
