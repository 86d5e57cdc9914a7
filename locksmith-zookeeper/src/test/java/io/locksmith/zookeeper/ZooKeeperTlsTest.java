package io.locksmith.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.BackendConfigurationException;
import io.locksmith.BackendUnavailableException;
import io.locksmith.Lease;
import io.locksmith.testkit.TestCertificates;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.data.ACL;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 23, item 20: TLS to a real server's secure client port, configured per client, with a client
 * certificate (ZooKeeper's default asks for one); and each certificate problem is a configuration error,
 * told apart from an outage.
 *
 * <p>The server is curator-test's, with Netty (ZooKeeper serves TLS only with it), a {@code secureClientPort}
 * next to the plain port, and stores from the testkit's {@link TestCertificates} (the JDK's keytool). ZooKeeper
 * turns the server's {@code ssl.*} and {@code serverCnxnFactory} settings into JVM-wide system properties;
 * they are put back as they were after the class, so that the other servers of the test JVM stay plain.
 */
class ZooKeeperTlsTest {
  private static final char[] PASSWORD = TestCertificates.PASSWORD.toCharArray();
  private static Properties systemProperties;
  private static Path dir;
  private static TestCertificates pki;
  private static TestingServer server;
  private static int securePort;

  @BeforeAll
  static void startTlsServer() throws Exception {
    systemProperties = (Properties) System.getProperties().clone();
    dir = Files.createTempDirectory("zk-tls");
    pki = TestCertificates.create(dir);
    Path serverPem = dir.resolve("server-key-and-chain.pem"); // ZooKeeper's PEM key store: key and chain in one file
    Files.writeString(serverPem, Files.readString(pki.serverKey()) + Files.readString(pki.serverCertificate())
        + Files.readString(pki.caCertificate()));
    // the secure port is picked free but bound only when the server starts: another JVM of the build (a
    // parallel fork or module) may take it in between, so a start that fails is retried on another port
    for (int attempt = 1; ; attempt++) {
      try {
        server = tlsServer(serverPem);
        return;
      } catch (Exception e) {
        if (attempt == 3) {
          throw e;
        }
      }
    }
  }

  private static TestingServer tlsServer(Path serverPem) throws Exception {
    securePort = InstanceSpec.getRandomPort();
    Map<String, Object> tls = new HashMap<>();
    tls.put("serverCnxnFactory", "org.apache.zookeeper.server.NettyServerCnxnFactory");
    tls.put("secureClientPort", Integer.toString(securePort));
    tls.put("ssl.keyStore.location", serverPem.toString());
    tls.put("ssl.keyStore.type", "PEM");
    tls.put("ssl.trustStore.location", pki.trustStore().toString());
    tls.put("ssl.trustStore.password", TestCertificates.PASSWORD);
    tls.put("ssl.trustStore.type", "PKCS12");
    tls.put("ssl.hostnameVerification", "false"); // the server's check of client certificates, which name no host
    File data = Files.createTempDirectory("zk-tls-data").toFile();
    return new TestingServer(new InstanceSpec(data, -1, -1, -1, true, -1, -1, -1, tls), true);
  }

  @AfterAll
  static void stop() throws Exception {
    try {
      if (server != null) {
        server.close();
      }
    } finally {
      System.setProperties(systemProperties);
    }
  }

  private static ZooKeeperTls.Builder trusted() {
    return ZooKeeperTls.builder().trustStore(pki.trustStore(), PASSWORD);
  }

  private static String secureUri() {
    return "zookeeper://127.0.0.1:" + securePort + "/tls-" + Long.toHexString(System.nanoTime());
  }

  @Test
  void aClientWithItsCertificateLocksOverTlsAndItsNodesAreItsAlone() throws Exception {
    ZooKeeperTls tls = trusted().keyStore(pki.clientKeyStore(), PASSWORD).build();
    String uri = secureUri();
    try (ZooKeeperLockClient locks = ZooKeeperLockClient.builder().uri(uri).tls(tls).build();
        ZooKeeperLockClient other = ZooKeeperLockClient.builder().uri(uri).tls(tls).build()) {
      Lease lease = locks.lock("over-tls").acquire();
      assertThat(other.lock("over-tls").tryAcquire()).as("held").isEmpty();
      // the server knows the client by its certificate (x509): its nodes are CREATOR_ALL for that identity
      List<ACL> acl = locks.backend.nodeAcl();
      assertThat(acl).isNotNull().singleElement().satisfies(a -> assertThat(a.getId().getScheme()).isEqualTo("auth"));
      String parent = locks.backend.parent(Side.EXCLUSIVE, "over-tls");
      List<ACL> onServer = locks.backend.curator().getACL().forPath(parent);
      assertThat(onServer).singleElement().satisfies(a -> assertThat(a.getId().getScheme()).isEqualTo("x509"));
      lease.release();
      assertThat(other.lock("over-tls").tryAcquire()).as("free again").isPresent().hasValueSatisfying(Lease::release);
    }
    assertThat(System.getProperty("zookeeper.client.secure")).as("nothing set JVM-wide").isNull();
  }

  @Test
  void anUntrustedServerCertificateIsAConfigurationError() {
    // a "CA" that did not sign the server's certificate
    ZooKeeperTls tls = ZooKeeperTls.builder().trustCertificates(pki.clientCertificate())
        .keyStore(pki.clientKeyStore(), PASSWORD).build();
    assertThatThrownBy(() -> ZooKeeperLockClient.builder().uri(secureUri()).tls(tls).build())
        .isInstanceOf(BackendConfigurationException.class).hasMessageContaining("not trusted")
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain(TestCertificates.PASSWORD));
  }

  @Test
  void aMissingClientCertificateIsAConfigurationError() {
    ZooKeeperTls tls = trusted().build();
    assertThatThrownBy(() -> ZooKeeperLockClient.builder().uri(secureUri()).tls(tls).build())
        .isInstanceOf(BackendConfigurationException.class).hasMessageContaining("did not accept this client's TLS certificate");
  }

  @Test
  void tlsToThePlainPortIsAConfigurationError() {
    ZooKeeperTls tls = trusted().keyStore(pki.clientKeyStore(), PASSWORD).build();
    assertThatThrownBy(() -> ZooKeeperLockClient.builder().uri("zookeeper://127.0.0.1:" + server.getPort()).tls(tls)
        .build()).isInstanceOf(BackendConfigurationException.class).hasMessageContaining("secureClientPort");
  }

  @Test
  void aServerThatIsDownIsAnOutageNotAConfigurationError() {
    ZooKeeperTls tls = trusted().keyStore(pki.clientKeyStore(), PASSWORD).build();
    int closed = TestCertificates.freePort();
    assertThatThrownBy(() -> ZooKeeperLockClient.builder().uri("zookeeper://127.0.0.1:" + closed).tls(tls)
        .connectionTimeout(Duration.ofMillis(500)).build()).isInstanceOf(BackendUnavailableException.class);
  }

  @Test
  void unreadableStoresAreRefusedWhenTheSettingsAreBuilt() {
    assertThatThrownBy(() -> ZooKeeperTls.builder().trustStore(pki.trustStore(), "not-the-password-42".toCharArray())
        .build()).isInstanceOf(IllegalArgumentException.class).hasMessageContaining(pki.trustStore().toString())
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain("not-the-password-42"));
    assertThatThrownBy(() -> ZooKeeperTls.builder().trustStore(dir.resolve("missing.p12"), PASSWORD).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("missing.p12");
    assertThatThrownBy(() -> ZooKeeperTls.builder().keyStore(pki.clientKeyStore(), PASSWORD).build())
        .as("no trust store").isInstanceOf(IllegalArgumentException.class).hasMessageContaining("trust store");
    assertThatThrownBy(() -> trusted().keyStore(pki.trustStore(), PASSWORD).build())
        .as("a key store without a key").isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no key");
  }
}
