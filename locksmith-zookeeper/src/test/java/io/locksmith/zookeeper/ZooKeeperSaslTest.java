package io.locksmith.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.BackendConfigurationException;
import io.locksmith.Lease;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import javax.security.auth.login.Configuration;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.server.auth.ProviderRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 23, item 20: SASL (DIGEST-MD5, ZooKeeper's {@code DigestLoginModule}) against a real server, with
 * the login section chosen per client; the nodes of a SASL client are closed to strangers, and a section
 * that is not in the JAAS configuration is a configuration error at build.
 *
 * <p>JAAS and ZooKeeper's server authentication providers are JVM-wide: the class sets them for its own
 * server and puts everything back afterwards (system properties, the cached JAAS configuration, the
 * provider registry), so the module's other servers stay as they were.
 */
class ZooKeeperSaslTest {
  private static Properties systemProperties;
  private static TestingServer server;

  @BeforeAll
  static void startSaslServer() throws Exception {
    systemProperties = (Properties) System.getProperties().clone();
    Path jaas = Files.createTempFile("zk-sasl", ".jaas");
    Files.writeString(jaas, String.join("\n",
        "Server {",
        "  org.apache.zookeeper.server.auth.DigestLoginModule required user_alice=\"secret\";",
        "};",
        "LocksmithAlice {",
        "  org.apache.zookeeper.server.auth.DigestLoginModule required username=\"alice\" password=\"secret\";",
        "};",
        "LocksmithWrongPassword {",
        "  org.apache.zookeeper.server.auth.DigestLoginModule required username=\"alice\" password=\"not-it-42\";",
        "};",
        ""));
    System.setProperty("java.security.auth.login.config", jaas.toString());
    System.setProperty("zookeeper.authProvider.sasl", "org.apache.zookeeper.server.auth.SASLAuthenticationProvider");
    Configuration.getConfiguration().refresh(); // another test may have loaded (and cached) it already
    ProviderRegistry.reset();
    File data = Files.createTempDirectory("zk-sasl-data").toFile();
    server = new TestingServer(new InstanceSpec(data, -1, -1, -1, true, -1, -1, -1, Map.of()), true);
  }

  @AfterAll
  static void stop() throws Exception {
    try {
      if (server != null) {
        server.close();
      }
    } finally {
      System.setProperties(systemProperties);
      Configuration.getConfiguration().refresh();
      ProviderRegistry.reset();
    }
  }

  @Test
  void aSaslClientsNodesAreClosedToStrangers() throws Exception {
    String chroot = "/sasl-" + Long.toHexString(System.nanoTime());
    try (ZooKeeperLockClient alice = ZooKeeperLockClient.builder().uri("zookeeper://" + server.getConnectString() + chroot)
        .saslLoginContext("LocksmithAlice").build();
        CuratorFramework stranger = CuratorFrameworkFactory.builder().connectString(server.getConnectString())
            .retryPolicy(new RetryNTimes(3, 100)).build()) {
      stranger.start();
      Lease lease = alice.lock("guarded").acquire();
      String parent = alice.backend.parent(Side.EXCLUSIVE, "guarded");
      String node = parent + "/" + alice.backend.curator().getChildren().forPath(parent).get(0);
      List<ACL> acl = alice.backend.curator().getACL().forPath(node);
      assertThat(acl).singleElement().satisfies(a -> assertThat(a.getId().getScheme() + ":" + a.getId().getId())
          .isEqualTo("sasl:alice"));
      assertThatThrownBy(() -> stranger.delete().forPath(node)).isInstanceOf(KeeperException.NoAuthException.class);
      lease.release();
    }
  }

  @Test
  void aMissingLoginSectionIsAConfigurationError() {
    assertThatThrownBy(() -> ZooKeeperLockClient.builder().uri("zookeeper://" + server.getConnectString())
        .saslLoginContext("NoSuchSection").build()).isInstanceOf(BackendConfigurationException.class)
        .hasMessageContaining("NoSuchSection");
  }

  @Test
  void aWrongPasswordIsAConfigurationErrorNotAnOutage() {
    // ZooKeeper's client stays connected after a refused SASL login and answers nothing: without the
    // check this was a BackendUnavailableException after the connection timeout
    assertThatThrownBy(() -> ZooKeeperLockClient.builder().uri("zookeeper://" + server.getConnectString())
        .saslLoginContext("LocksmithWrongPassword").connectionTimeout(java.time.Duration.ofSeconds(3)).build())
        .isInstanceOf(BackendConfigurationException.class).hasMessageContaining("refused this client's SASL")
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain("not-it-42"));
  }
}
