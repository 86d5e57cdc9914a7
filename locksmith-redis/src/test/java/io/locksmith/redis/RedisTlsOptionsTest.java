package io.locksmith.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.BackendConfigurationException;
import io.locksmith.Lease;
import io.locksmith.LockClient;
import io.locksmith.testkit.RedisServer;
import io.locksmith.testkit.TestCertificates;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Per-client TLS settings ({@link RedisTls}) against real Redis servers serving TLS with certificates from
 * a private CA made by {@link TestCertificates}: trust by CA file and by trust store, mutual TLS with a key
 * store and with PEM files, host name verification, and the configuration errors each can produce.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisTlsOptionsTest {
  @TempDir static Path dir;
  static TestCertificates pki;
  /** TLS, certificate for 127.0.0.1, no client certificate required; three of them for Redlock. */
  static final List<Tls> open = new ArrayList<>();
  /** TLS, clients must present a certificate signed by the CA. */
  static Tls mutual;
  /** TLS with a certificate that names only other.invalid. */
  static Tls otherName;

  record Tls(RedisServer server, int port) {
    String uri() {
      return "rediss://127.0.0.1:" + port;
    }
  }

  @BeforeAll
  static void servers() {
    pki = TestCertificates.create(dir);
    for (int i = 0; i < 3; i++) {
      open.add(start(pki.serverCertificate(), false));
    }
    mutual = start(pki.serverCertificate(), true);
    otherName = start(pki.serverCertificateForOtherName(), false);
  }

  private static Tls start(Path certificate, boolean requireClientCertificates) {
    int port = TestCertificates.freePort();
    RedisServer server = RedisServer.builder()
        .extraArgs(pki.redisTlsArgs(port, certificate, requireClientCertificates)).start();
    return new Tls(server, port);
  }

  @AfterAll
  static void stop() {
    open.forEach(t -> t.server().close());
    if (mutual != null) {
      mutual.server().close();
    }
    if (otherName != null) {
      otherName.server().close();
    }
  }

  private static RedisTls trustingTheCa() {
    return RedisTls.builder().trustCertificates(pki.caCertificate()).build();
  }

  private static void lockAndRelease(LockClient locks) throws InterruptedException {
    Lease lease = locks.lock("over-tls").acquire(Duration.ofSeconds(5));
    assertThat(lease.isHeld()).isTrue();
    assertThat(lease.release()).isTrue();
  }

  @Test
  void aPrivateCaFromAPemFileIsTrustedAndTheHostNameIsVerifiedByDefault() throws Exception {
    RedisTls tls = trustingTheCa();
    assertThat(tls.verifyHostname()).isTrue();
    try (RedisLockClient locks = RedisLockClient.builder().uri(open.get(0).uri()).tls(tls).build()) {
      lockAndRelease(locks);
    }
  }

  @Test
  void aPrivateCaFromATrustStoreIsTrusted() throws Exception {
    RedisTls tls = RedisTls.builder()
        .trustStore(pki.trustStore(), TestCertificates.PASSWORD.toCharArray()).build();
    try (RedisLockClient locks = RedisLockClient.builder().uri(open.get(0).uri()).tls(tls).build()) {
      lockAndRelease(locks);
    }
  }

  @Test
  void mutualTlsWithAKeyStoreOrWithPemFiles() throws Exception {
    RedisTls withKeyStore = RedisTls.builder().trustCertificates(pki.caCertificate())
        .keyStore(pki.clientKeyStore(), TestCertificates.PASSWORD.toCharArray()).build();
    try (RedisLockClient locks = RedisLockClient.builder().uri(mutual.uri()).tls(withKeyStore).build()) {
      lockAndRelease(locks);
    }
    RedisTls withPem = RedisTls.builder().trustCertificates(pki.caCertificate())
        .clientCertificate(pki.clientCertificate(), pki.clientKey()).build();
    try (RedisLockClient locks = RedisLockClient.builder().uri(mutual.uri()).tls(withPem).build()) {
      lockAndRelease(locks);
    }
  }

  @Test
  void aServerThatRequiresAClientCertificateRefusesAClientWithoutOne() {
    assertThatThrownBy(() -> RedisLockClient.builder().uri(mutual.uri()).tls(trustingTheCa())
        .commandTimeout(Duration.ofSeconds(2)).build())
        .isInstanceOf(BackendConfigurationException.class)
        .hasMessageStartingWith("could not connect to " + mutual.uri() + ": ")
        .hasMessageContaining("client's TLS certificate");
  }

  @Test
  void trustingAnotherCertificateThanTheServersCaIsAConfigurationError() {
    // the client's certificate is no CA; the server's chain does not lead to it
    RedisTls wrongCa = RedisTls.builder().trustCertificates(pki.clientCertificate()).build();
    assertThatThrownBy(() -> RedisLockClient.builder().uri(open.get(0).uri()).tls(wrongCa).build())
        .isInstanceOf(BackendConfigurationException.class)
        .hasMessageStartingWith("could not connect to " + open.get(0).uri()
            + ": the server's TLS certificate is not trusted (");
  }

  @Test
  void aHostNameMismatchIsAConfigurationErrorUnlessVerificationIsTurnedOff() throws Exception {
    assertThatThrownBy(() -> RedisLockClient.builder().uri(otherName.uri()).tls(trustingTheCa()).build())
        .isInstanceOf(BackendConfigurationException.class)
        .hasMessageStartingWith("could not connect to " + otherName.uri()
            + ": the server's TLS certificate does not name the host connected to (")
        .hasMessageContaining("127.0.0.1");
    RedisTls chainOnly = RedisTls.builder().trustCertificates(pki.caCertificate()).verifyHostname(false).build();
    try (RedisLockClient locks = RedisLockClient.builder().uri(otherName.uri()).tls(chainOnly).build()) {
      lockAndRelease(locks);
    }
  }

  @Test
  void redlockUsesTheSameSettingsOnEveryNode() throws Exception {
    try (RedlockClient locks = RedlockClient.builder()
        .nodes(open.get(0).uri(), open.get(1).uri(), open.get(2).uri())
        .nodeTimeout(Duration.ofSeconds(1)).tls(trustingTheCa()).build()) {
      lockAndRelease(locks);
    }
    // without the CA no node can be reached, and that is a configuration error, not an outage
    assertThatThrownBy(() -> RedlockClient.builder().nodes(open.get(0).uri(), open.get(1).uri(), open.get(2).uri())
        .nodeTimeout(Duration.ofSeconds(1)).build())
        .isInstanceOf(BackendConfigurationException.class)
        .hasMessageStartingWith("only 0 of 3 Redlock nodes could be reached, 2 needed")
        .hasMessageContaining("the server's TLS certificate is not trusted");
  }

  /** The example in docs/redis.md, section "TLS", as written there apart from the paths. */
  @Test
  void theDocumentedExampleWorks() throws Exception {
    Path caFile = pki.caCertificate();
    Path clientCrt = pki.clientCertificate();
    Path clientKey = pki.clientKey();
    String uri = "rediss://127.0.0.1:" + mutual.port();
    // --- docs/redis.md ---
    RedisTls tls = RedisTls.builder()
        .trustCertificates(caFile)                   // the private CA, PEM
        .clientCertificate(clientCrt, clientKey)     // only if the server requires client certificates
        .build();
    try (RedisLockClient locks = RedisLockClient.builder().uri(uri).tls(tls).build()) {
      try (Lease lease = locks.lock("invoice-42").acquire(Duration.ofSeconds(5))) {
        assertThat(lease.fencingToken()).isPositive();
      }
    }
    // --- end ---
  }

  @Test
  void badTlsSettingsAreRejectedAtBuildNamingTheFileNeverThePassword() throws Exception {
    Path missing = dir.resolve("missing.crt");
    assertThatThrownBy(() -> RedisTls.builder().trustCertificates(missing).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(missing.toString())
        .hasMessageContaining("does not exist");
    assertThatThrownBy(() -> RedisTls.builder().trustCertificates(pki.caCertificate())
        .trustStore(pki.trustStore(), TestCertificates.PASSWORD.toCharArray()).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not both");
    assertThatThrownBy(() -> RedisTls.builder().trustStore(pki.trustStore(), "wr0ng-pw".toCharArray()).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(pki.trustStore().toString())
        .hasMessageNotContaining("wr0ng-pw");
    assertThatThrownBy(() -> RedisTls.builder().trustCertificates(pki.clientKey()).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(pki.clientKey().toString());
    Path pkcs1 = dir.resolve("pkcs1.key");
    Files.writeString(pkcs1, "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n");
    assertThatThrownBy(() -> RedisTls.builder().clientCertificate(pki.clientCertificate(), pkcs1).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("PKCS#1")
        .hasMessageContaining("openssl pkcs8");
    assertThatThrownBy(() -> RedisTls.builder().keyStore(pki.trustStore(), TestCertificates.PASSWORD.toCharArray())
        .build()).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("private key");
    assertThat(RedisTls.builder().keyStore(pki.clientKeyStore(), TestCertificates.PASSWORD.toCharArray()).build()
        .toString()).contains(pki.clientKeyStore().toString()).doesNotContain(TestCertificates.PASSWORD);

    RedisTls tls = trustingTheCa();
    assertThatThrownBy(() -> RedisLockClient.builder().uri("redis://127.0.0.1:6379").tls(tls).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("rediss://");
    assertThatThrownBy(() -> RedisLockClient.builder().uri("rediss://127.0.0.1:6379?verifyPeer=NONE").tls(tls)
        .build()).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("verifyPeer");
    assertThatThrownBy(() -> RedlockClient.builder().tls(tls)
        .nodes("rediss://a:1", "redis://b:1", "rediss://c:1").build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("redis://b:1");
    assertThat(tls.toString()).contains(pki.caCertificate().toString()).contains("verifyHostname=true");
  }
}
