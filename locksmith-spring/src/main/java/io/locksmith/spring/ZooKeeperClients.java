package io.locksmith.spring;

import io.locksmith.ClientOptions;
import io.locksmith.LockClient;
import io.locksmith.zookeeper.ZooKeeperLockClient;
import java.util.Locale;
import org.apache.curator.framework.CuratorFramework;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/** ZooKeeper clients from properties; loaded only when locksmith-zookeeper is present. */
final class ZooKeeperClients {

  private ZooKeeperClients() {}

  static LockClient zookeeper(LockClientFactory f, String clientName, String prefix, LockClientProperties p,
      ClientOptions options, BeanFactory beans) {
    LockClientProperties.ZooKeeper z = p.getZookeeper();
    ZooKeeperLockClient.Builder b = ZooKeeperLockClient.builder().options(options);
    if (LockClientFactory.hasText(z.getConnectString())) {
      String cs = z.getConnectString().trim();
      b.uri(cs.startsWith("zookeeper://") ? cs : "zookeeper://" + cs)
          .sessionTimeout(z.getSessionTimeout()).connectionTimeout(z.getConnectionTimeout());
    } else {
      // no address: the application's own CuratorFramework, if it has exactly one
      CuratorFramework curator = beans.getBeanProvider(CuratorFramework.class).getIfUnique();
      if (curator == null) {
        throw new InvalidConfigurationPropertyValueException(prefix + ".zookeeper.connect-string", null,
            "the zookeeper backend needs a connect string (host:port[,host:port][/chroot]) or a single CuratorFramework bean");
      }
      b.curator(curator);
    }
    f.customize(clientName, b);
    try {
      return b.build();
    } catch (IllegalArgumentException e) {
      String m = e.getMessage() == null ? "" : e.getMessage().toLowerCase(Locale.ROOT);
      String property = m.contains("session") ? "session-timeout" : m.contains("connection") ? "connection-timeout" : "connect-string";
      Object value = property.equals("session-timeout") ? z.getSessionTimeout()
          : property.equals("connection-timeout") ? z.getConnectionTimeout() : z.getConnectString();
      throw new InvalidConfigurationPropertyValueException(prefix + ".zookeeper." + property, value, Redaction.redact(e.getMessage()));
    }
  }
}
