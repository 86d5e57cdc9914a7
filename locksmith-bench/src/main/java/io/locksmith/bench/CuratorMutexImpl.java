package io.locksmith.bench;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * Curator's own lock recipe, {@code InterProcessMutex}, one per name and shared by the threads (it is
 * re-entrant per thread), on a {@code CuratorFramework} of its own: the peer of Locksmith's ZooKeeper
 * backend. It has no fencing token and learns a lost session only from Curator's {@code LOST}.
 */
final class CuratorMutexImpl implements LockImpl {
  private final CuratorFramework client;
  private final ConcurrentMap<String, InterProcessMutex> mutexes = new ConcurrentHashMap<>();

  CuratorMutexImpl(String connectString) throws InterruptedException {
    client = connect(connectString);
  }

  /**
   * A started {@code CuratorFramework} with Curator's usual settings (15 s session, 5 s connection,
   * exponential retry), connected; the peers on ZooKeeper share it.
   *
   * @throws IllegalStateException if it does not connect within 10 s
   */
  static CuratorFramework connect(String connectString) throws InterruptedException {
    CuratorFramework client = CuratorFrameworkFactory.newClient(connectString, 15_000, 5_000,
        new ExponentialBackoffRetry(100, 3));
    client.start();
    if (!client.blockUntilConnected(10, TimeUnit.SECONDS)) {
      client.close();
      throw new IllegalStateException("Curator could not connect to " + connectString);
    }
    return client;
  }

  @Override
  public String name() {
    return "curator";
  }

  @Override
  public Held acquire(String name, long waitNanos) throws Exception {
    InterProcessMutex mutex = mutexes.computeIfAbsent(name, n -> new InterProcessMutex(client, "/curator-bench/" + n));
    return mutex.acquire(waitNanos, TimeUnit.NANOSECONDS) ? mutex::release : null;
  }

  @Override
  public void close() {
    client.close();
  }
}
