package io.locksmith.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.BackendUnavailableException;
import io.locksmith.Lease;
import io.locksmith.testkit.RedisServer;
import java.io.FileInputStream;
import java.io.InputStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.time.Duration;
import java.util.Base64;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code rediss://}: a real Redis serving TLS with a certificate made here by the JDK's keytool. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisTlsTest {

  @Test
  void locksWorkOverTls(@TempDir Path dir) throws Exception {
    Path keystore = dir.resolve("redis.p12");
    Process keytool = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
        "-genkeypair", "-alias", "redis", "-keyalg", "RSA", "-keysize", "2048", "-validity", "2",
        "-dname", "CN=localhost", "-ext", "SAN=ip:127.0.0.1", "-storetype", "PKCS12",
        "-keystore", keystore.toString(), "-storepass", "changeit", "-keypass", "changeit")
        .redirectErrorStream(true).start();
    String keytoolOutput = new String(keytool.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(keytool.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(keytool.exitValue()).as(keytoolOutput).isZero();

    KeyStore ks = KeyStore.getInstance("PKCS12");
    try (InputStream in = new FileInputStream(keystore.toFile())) {
      ks.load(in, "changeit".toCharArray());
    }
    PrivateKey key = (PrivateKey) ks.getKey("redis", "changeit".toCharArray());
    Certificate cert = ks.getCertificate("redis");
    Path certPem = dir.resolve("redis.crt");
    Path keyPem = dir.resolve("redis.key");
    Files.writeString(certPem, pem("CERTIFICATE", cert.getEncoded()));
    Files.writeString(keyPem, pem("PRIVATE KEY", key.getEncoded()));

    int tlsPort;
    try (ServerSocket s = new ServerSocket(0)) {
      tlsPort = s.getLocalPort();
    }
    try (RedisServer server = RedisServer.builder().extraArgs("--tls-port", Integer.toString(tlsPort),
        "--tls-cert-file", certPem.toString(), "--tls-key-file", keyPem.toString(),
        "--tls-ca-cert-file", certPem.toString(), "--tls-auth-clients", "no").start()) {
      String uri = "rediss://127.0.0.1:" + tlsPort + "?verifyPeer=NONE";
      try (RedisLockClient locks = RedisLockClient.create(uri)) {
        assertThat(locks.serverDescription()).startsWith("rediss://");
        Lease lease = locks.lock("over-tls").acquire(Duration.ofSeconds(2));
        assertThat(lease.isHeld()).isTrue();
        assertThat(lease.release()).isTrue();
      }
      // a plain-text client on the TLS port gets no Redis answer: the traffic above was TLS
      assertThatThrownBy(() -> RedisLockClient.builder().uri("redis://127.0.0.1:" + tlsPort)
          .commandTimeout(Duration.ofMillis(500)).build())
          .isInstanceOf(BackendUnavailableException.class);
      assertThat(server.isRunning()).isTrue();
    }
  }

  private static String pem(String type, byte[] der) {
    return "-----BEGIN " + type + "-----\n"
        + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
        + "\n-----END " + type + "-----\n";
  }
}
