package io.locksmith.bench;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.apache.curator.framework.CuratorFramework;
import org.springframework.integration.zookeeper.lock.ZookeeperLockRegistry;

/**
 * Spring Integration's {@code ZookeeperLockRegistry} with its defaults, on a {@code CuratorFramework} of
 * its own: one registry shared by the threads, as an application uses it (its locks are Curator
 * {@code InterProcessMutex}es, one per key, re-entrant per thread).
 */
final class SpringZooKeeperImpl implements LockImpl {
  private final CuratorFramework client;
  private final ZookeeperLockRegistry registry;

  SpringZooKeeperImpl(String connectString) throws InterruptedException {
    client = CuratorMutexImpl.connect(connectString);
    registry = new ZookeeperLockRegistry(client, "/spring-bench");
  }

  @Override
  public String name() {
    return "spring-zk";
  }

  @Override
  public Held acquire(String name, long waitNanos) throws InterruptedException {
    Lock lock = registry.obtain(name);
    return lock.tryLock(waitNanos, TimeUnit.NANOSECONDS) ? lock::unlock : null;
  }

  @Override
  public void close() {
    registry.destroy();
    client.close();
  }
}
