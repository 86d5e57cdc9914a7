package io.locksmith.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A private certificate authority for TLS tests, made with nothing but the JDK's {@code keytool}: a CA,
 * a server certificate for {@code 127.0.0.1} and {@code localhost}, a second certificate for the same
 * server key that names only {@code other.invalid} (for host name mismatches), and a client certificate
 * for mutual TLS, all signed by the CA. Everything is written to one directory as PEM files (keys as
 * unencrypted PKCS#8, which both {@code redis-server} and Netty read) and as PKCS#12 stores.
 *
 * <pre>{@code
 * TestCertificates pki = TestCertificates.create(tempDir);
 * int tlsPort = TestCertificates.freePort();
 * try (RedisServer redis = RedisServer.builder()
 *     .extraArgs(pki.redisTlsArgs(tlsPort, pki.serverCertificate(), true)).start()) {
 *   // rediss://127.0.0.1:tlsPort, trusting pki.caCertificate(), presenting pki.clientCertificate()
 * }
 * }</pre>
 *
 * <p>Certificates are valid for 2 days. Making a set takes a few seconds (one {@code keytool} process per
 * step), so one set is made per machine and day, under {@code java.io.tmpdir}/locksmith-test-pki, and
 * {@link #create} copies it into the directory asked for. Instances are immutable and thread-safe.
 */
public final class TestCertificates {
  /** Password of every store and key made here. */
  public static final String PASSWORD = "changeit";
  private static final long KEYTOOL_TIMEOUT_SECONDS = 60;

  private final Path dir;

  private TestCertificates(Path dir) {
    this.dir = dir;
  }

  /**
   * Makes the CA and the certificates in {@code dir}.
   *
   * @param dir an existing, writable directory (e.g. a JUnit {@code @TempDir})
   * @return the certificate set
   * @throws IllegalStateException if {@code keytool} fails (the message holds its output)
   * @throws UncheckedIOException if a file cannot be written
   */
  public static TestCertificates create(Path dir) {
    Path target = dir.toAbsolutePath();
    Path made = todaysSet();
    try (Stream<Path> files = Files.list(made)) {
      for (Path file : (Iterable<Path>) files::iterator) {
        Files.copy(file, target.resolve(file.getFileName().toString()), StandardCopyOption.REPLACE_EXISTING);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot copy the test certificates into " + target, e);
    }
    return new TestCertificates(target);
  }

  /**
   * The set made today (UTC) on this machine, made now if there is none: nine {@code keytool} processes cost
   * seconds of CPU (tens of seconds on a loaded machine), and every TLS test class used to pay them. A set
   * is at most a day old when used and valid for two. Several JVMs may race to make it: each makes its own
   * in a directory of its own and renames it into place; a loser uses the winner's.
   */
  private static synchronized Path todaysSet() {
    Path base = Path.of(System.getProperty("java.io.tmpdir"), "locksmith-test-pki");
    Path today = base.resolve(LocalDate.now(ZoneOffset.UTC).toString());
    if (Files.isDirectory(today)) {
      return today;
    }
    try {
      Files.createDirectories(base);
      Path fresh = Files.createTempDirectory(base, "making-");
      try {
        new TestCertificates(fresh).make();
      } catch (RuntimeException e) {
        deleteTree(fresh);
        throw e;
      }
      try {
        Files.move(fresh, today, StandardCopyOption.ATOMIC_MOVE);
      } catch (IOException raced) {
        if (!Files.isDirectory(today)) {
          throw raced;
        }
        deleteTree(fresh); // another JVM renamed its set into place first
      }
      return today;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot make the test certificates under " + base, e);
    }
  }

  private static void deleteTree(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      for (Path file : (Iterable<Path>) files::iterator) {
        Files.delete(file);
      }
    }
    Files.delete(dir);
  }

  /** @return the CA certificate, PEM */
  public Path caCertificate() {
    return dir.resolve("ca.crt");
  }

  /** @return a PKCS#12 trust store holding the CA certificate, password {@link #PASSWORD} */
  public Path trustStore() {
    return dir.resolve("truststore.p12");
  }

  /** @return the server certificate, PEM; it names {@code 127.0.0.1} and {@code localhost} */
  public Path serverCertificate() {
    return dir.resolve("server.crt");
  }

  /** @return a certificate for the server's key that names only {@code other.invalid}, PEM */
  public Path serverCertificateForOtherName() {
    return dir.resolve("server-other-name.crt");
  }

  /** @return the server's private key, PKCS#8 PEM */
  public Path serverKey() {
    return dir.resolve("server.key");
  }

  /** @return the client certificate, PEM */
  public Path clientCertificate() {
    return dir.resolve("client.crt");
  }

  /** @return the client's private key, PKCS#8 PEM */
  public Path clientKey() {
    return dir.resolve("client.key");
  }

  /** @return a PKCS#12 key store with the client key and its chain, password {@link #PASSWORD} */
  public Path clientKeyStore() {
    return dir.resolve("client-chain.p12");
  }

  /**
   * {@code redis-server} arguments that add a TLS port (the plain port stays, for the testkit's own
   * commands).
   *
   * @param tlsPort the TLS port, e.g. from {@link #freePort()}
   * @param certificate the server certificate to present: {@link #serverCertificate()} or {@link
   *     #serverCertificateForOtherName()}
   * @param requireClientCertificates whether clients must present a certificate signed by the CA
   * @return the arguments for {@link RedisServer.Builder#extraArgs(String...)}
   */
  public String[] redisTlsArgs(int tlsPort, Path certificate, boolean requireClientCertificates) {
    return new String[] {"--tls-port", Integer.toString(tlsPort), "--tls-cert-file", certificate.toString(),
        "--tls-key-file", serverKey().toString(), "--tls-ca-cert-file", caCertificate().toString(),
        "--tls-auth-clients", requireClientCertificates ? "yes" : "no"};
  }

  /**
   * @return a loopback port that was free a moment ago (another process may take it before it is bound)
   * @throws UncheckedIOException if no port can be had
   */
  public static int freePort() {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void make() {
    keytool("-genkeypair", "-alias", "ca", "-keyalg", "RSA", "-keysize", "2048", "-validity", "2",
        "-dname", "CN=Locksmith Test CA", "-ext", "bc:c", "-ext", "KU=keyCertSign,cRLSign",
        "-storetype", "PKCS12", "-keystore", path("ca.p12"), "-storepass", PASSWORD, "-keypass", PASSWORD);
    keytool("-exportcert", "-rfc", "-alias", "ca", "-keystore", path("ca.p12"), "-storepass", PASSWORD,
        "-file", path("ca.crt"));
    leaf("server", "CN=localhost", "serverAuth", "SAN=ip:127.0.0.1,dns:localhost", "server.crt");
    // the same key and request, signed again for a name nobody connects to
    sign("server", "serverAuth", "SAN=dns:other.invalid", "server-other-name.crt");
    leaf("client", "CN=locksmith-test-client", "clientAuth", null, "client.crt");
    try {
      Certificate ca = readCertificate(caCertificate());
      KeyStore trust = KeyStore.getInstance("PKCS12");
      trust.load(null, null);
      trust.setCertificateEntry("ca", ca);
      store(trust, trustStore());
      writePem(serverKey(), "PRIVATE KEY", key("server").getEncoded());
      PrivateKey clientKey = key("client");
      writePem(clientKey(), "PRIVATE KEY", clientKey.getEncoded());
      KeyStore client = KeyStore.getInstance("PKCS12");
      client.load(null, null);
      client.setKeyEntry("client", clientKey, PASSWORD.toCharArray(),
          new Certificate[] {readCertificate(clientCertificate()), ca});
      store(client, clientKeyStore());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("cannot assemble the test key stores", e);
    }
  }

  /** A key pair in {@code <name>.p12}, its certificate request, and the CA's signature on it. */
  private void leaf(String name, String dname, String usage, String san, String certFile) {
    keytool("-genkeypair", "-alias", name, "-keyalg", "RSA", "-keysize", "2048", "-validity", "2",
        "-dname", dname, "-storetype", "PKCS12", "-keystore", path(name + ".p12"),
        "-storepass", PASSWORD, "-keypass", PASSWORD);
    keytool("-certreq", "-alias", name, "-keystore", path(name + ".p12"), "-storepass", PASSWORD,
        "-file", path(name + ".csr"));
    sign(name, usage, san, certFile);
  }

  private void sign(String name, String usage, String san, String certFile) {
    List<String> args = new ArrayList<>(List.of("-gencert", "-rfc", "-alias", "ca", "-keystore", path("ca.p12"),
        "-storepass", PASSWORD, "-infile", path(name + ".csr"), "-outfile", path(certFile), "-validity", "2",
        "-ext", "KU=digitalSignature,keyEncipherment", "-ext", "EKU=" + usage));
    if (san != null) {
      args.add("-ext");
      args.add(san);
    }
    keytool(args.toArray(new String[0]));
  }

  private PrivateKey key(String name) throws IOException, GeneralSecurityException {
    KeyStore ks = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(dir.resolve(name + ".p12"))) {
      ks.load(in, PASSWORD.toCharArray());
    }
    return (PrivateKey) ks.getKey(name, PASSWORD.toCharArray());
  }

  private static Certificate readCertificate(Path pem) throws IOException, GeneralSecurityException {
    try (InputStream in = Files.newInputStream(pem)) {
      return CertificateFactory.getInstance("X.509").generateCertificate(in);
    }
  }

  private static void store(KeyStore ks, Path file) throws IOException, GeneralSecurityException {
    try (OutputStream out = Files.newOutputStream(file)) {
      ks.store(out, PASSWORD.toCharArray());
    }
  }

  private static void writePem(Path file, String type, byte[] der) throws IOException {
    Files.writeString(file, "-----BEGIN " + type + "-----\n"
        + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
        + "\n-----END " + type + "-----\n", StandardCharsets.US_ASCII);
  }

  private String path(String file) {
    return dir.resolve(file).toString();
  }

  private void keytool(String... args) {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
    cmd.addAll(List.of(args));
    Path log = dir.resolve("keytool.log");
    try {
      // output to a file, so that waiting for the process is bounded whatever it does
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
      if (!p.waitFor(KEYTOOL_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException("keytool " + args[0] + " did not finish within "
            + KEYTOOL_TIMEOUT_SECONDS + " s");
      }
      if (p.exitValue() != 0) {
        throw new IllegalStateException("keytool " + String.join(" ", args) + " failed: "
            + Files.readString(log, StandardCharsets.UTF_8));
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run keytool", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while running keytool", e);
    }
  }
}
