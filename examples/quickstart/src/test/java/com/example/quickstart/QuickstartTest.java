package com.example.quickstart;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.locksmith.redis.RedisFencedValue;
import io.locksmith.redis.RedisLockClient;
import io.locksmith.testkit.RedisServer;
import org.junit.jupiter.api.Test;

/** The quickstart against a real Redis, started by locksmith-testkit. */
class QuickstartTest {
  @Test
  void locksAndFencesOnARealRedis() throws Exception {
    try (RedisServer server = RedisServer.start(); RedisLockClient locks = Quickstart.configured(server.uri())) {
      RedisClient data = RedisClient.create(server.uri());
      try (StatefulRedisConnection<String, String> connection = data.connect()) {
        Quickstart.Report report = Quickstart.run(locks, RedisFencedValue.of(connection.sync(), "balance:42"));
        assertTrue(report.reportRan(), "the Lock view was granted");
        assertTrue(report.secondToken() > report.firstToken(), "tokens increase: " + report);
        assertEquals("80", report.balance(), "both holders' updates stand: " + report);
        assertTrue(report.staleHolderRefused(), "the first holder, back late, is refused: " + report);
        assertEquals("billing", locks.options().namespace(), "the builder's options are the client's");
      } finally {
        data.shutdown();
      }
    }
  }

  @Test
  void mainRunsAgainstAGivenServer() throws Exception {
    try (RedisServer server = RedisServer.start()) {
      Quickstart.main(new String[] {server.uri()});
    }
  }
}
