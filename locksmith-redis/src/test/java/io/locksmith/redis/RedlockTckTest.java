package io.locksmith.redis;

import io.locksmith.LockClient;
import io.locksmith.tck.LockClientTck;
import java.time.Duration;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The whole lock contract on Redlock over five real Redis processes. */
class RedlockTckTest extends LockClientTck {
  @RegisterExtension
  static final RedlockNodes NODES = new RedlockNodes(5);

  @Override
  protected LockClient newClient() {
    // a generous node timeout: the contract is under test here, not the latency of a loaded CI host
    return RedlockClient.builder().nodes(NODES.uris()).nodeTimeout(Duration.ofSeconds(1)).build();
  }
}
