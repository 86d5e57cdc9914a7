package com.example.quickstart;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.locksmith.LockClient;
import io.locksmith.injvm.InJvmLockServer;
import io.locksmith.redis.RedisLockClient;
import io.locksmith.testkit.RedisServer;
import org.junit.jupiter.api.Test;

/** The quickstart against a real Redis (started by locksmith-testkit) and against the in-JVM server. */
class QuickstartTest {
  @Test
  void runsAgainstARealRedis() throws Exception {
    try (RedisServer server = RedisServer.start(); RedisLockClient locks = RedisLockClient.create(server.uri())) {
      check(Quickstart.run(locks));
    }
  }

  @Test
  void runsAgainstTheInJvmServer() throws Exception {
    try (LockClient locks = new InJvmLockServer().newClient()) {
      check(Quickstart.run(locks));
    }
  }

  private static void check(Quickstart.Report report) {
    assertTrue(report.reportRan(), "the Lock view was granted");
    assertTrue(report.firstToken() > 0, "a fencing token: " + report);
    assertEquals(200, report.balance(), "the second holder's write stands: " + report);
    assertTrue(report.staleWriteRejected(), "the first holder's late write is refused: " + report);
  }
}
