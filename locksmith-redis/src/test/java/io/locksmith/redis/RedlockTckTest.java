package io.locksmith.redis;

import io.locksmith.LockClient;
import io.locksmith.tck.LockClientTck;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The whole lock contract on Redlock over five real Redis processes. */
class RedlockTckTest extends LockClientTck {
  private static RedlockNodes nodes;

  @BeforeAll
  static void startNodes() {
    nodes = new RedlockNodes(5);
  }

  @AfterAll
  static void stopNodes() {
    if (nodes != null) {
      nodes.close();
    }
  }

  @Override
  protected LockClient newClient() {
    // a generous node timeout: the contract is under test here, not the latency of a loaded CI host
    return RedlockClient.builder().nodes(nodes.uris()).nodeTimeout(Duration.ofSeconds(1)).build();
  }
}
