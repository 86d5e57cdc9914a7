package io.locksmith.redis;

import io.locksmith.LockClient;
import io.locksmith.tck.LockClientTck;
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
    return RedlockClient.builder().nodes(nodes.uris()).build();
  }
}
