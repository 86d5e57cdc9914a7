package io.locksmith.bench;

import io.lettuce.core.RedisURI;
import java.util.concurrent.locks.Lock;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.integration.redis.util.RedisLockRegistry;

/**
 * Spring Integration's {@code RedisLockRegistry} over Spring Data's Lettuce connection factory, in its
 * pub/sub mode (waiters are told of releases instead of polling every 100 ms).
 */
final class SpringImpl implements LockImpl {
  private final LettuceConnectionFactory factory;
  private final RedisLockRegistry registry;

  SpringImpl(String uri) {
    RedisURI parsed = RedisURI.create(uri);
    factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(parsed.getHost(), parsed.getPort()));
    factory.afterPropertiesSet();
    factory.start();
    registry = new RedisLockRegistry(factory, "spring-bench");
    registry.setRedisLockType(RedisLockRegistry.RedisLockType.PUB_SUB_LOCK);
  }

  @Override
  public String name() {
    return "spring";
  }

  @Override
  public Held acquire(String name, long waitNanos) throws InterruptedException {
    Lock lock = registry.obtain(name);
    return lock.tryLock(waitNanos, java.util.concurrent.TimeUnit.NANOSECONDS) ? lock::unlock : null;
  }

  @Override
  public void close() {
    registry.destroy();
    factory.destroy();
  }
}
