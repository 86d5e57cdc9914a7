package io.locksmith.zookeeper;

import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/** A plain Curator client for tests that look at the nodes a lock client made. */
final class RawZooKeeper implements AutoCloseable {
  final CuratorFramework curator;

  RawZooKeeper(String connectString) {
    curator = CuratorFrameworkFactory.newClient(connectString, 10_000, 5_000, new RetryNTimes(3, 100));
    curator.start();
  }

  /** @return the children of {@code path}, or an empty list if it does not exist */
  List<String> children(String path) {
    try {
      return curator.getChildren().forPath(path);
    } catch (KeeperException.NoNodeException e) {
      return List.of();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** @return the stat of {@code path}, or null */
  Stat stat(String path) {
    try {
      return curator.checkExists().forPath(path);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  byte[] data(String path) {
    try {
      return curator.getData().forPath(path);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() {
    curator.close();
  }
}
