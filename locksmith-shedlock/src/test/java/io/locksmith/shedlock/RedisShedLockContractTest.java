package io.locksmith.shedlock;

import io.locksmith.LockClient;
import io.locksmith.redis.RedisLockClient;
import io.locksmith.testkit.RedisServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

/** ShedLock's own provider contract, unmodified, on a real Redis server. */
class RedisShedLockContractTest extends LocksmithShedLockContract {
  @RegisterExtension
  static final RedisServerExtension REDIS = new RedisServerExtension();
  private static RedisLockClient jobs;
  private static RedisLockClient operator;
  private static LocksmithLockProvider provider;

  @BeforeAll
  static void connect() {
    jobs = RedisLockClient.create(REDIS.server().uri());
    operator = RedisLockClient.create(REDIS.server().uri());
    provider = new LocksmithLockProvider(jobs);
  }

  @AfterAll
  static void close() {
    provider.close();
    jobs.close();
    operator.close();
  }

  @Override
  LocksmithLockProvider provider() {
    return provider;
  }

  @Override
  LockClient operator() {
    return operator;
  }
}
