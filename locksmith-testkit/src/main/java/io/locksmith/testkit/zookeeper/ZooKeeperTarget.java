package io.locksmith.testkit.zookeeper;

/**
 * A running ZooKeeper service of this package: one {@link ZooKeeperTestServer} or a
 * {@link ZooKeeperEnsemble}. Implementations are thread-safe.
 */
public interface ZooKeeperTarget extends AutoCloseable {
  /** @return ZooKeeper's connect string, {@code host:port[,host:port…]} */
  String connectString();

  /** @return the connect string as a Locksmith URI, {@code zookeeper://host:port[,host:port…]} */
  default String uri() {
    return "zookeeper://" + connectString();
  }

  /** Stops every server and deletes its data; idempotent, never throws. */
  @Override
  void close();
}
