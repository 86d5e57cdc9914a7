package io.locksmith.zookeeper;

import io.locksmith.BackendConfigurationException;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.common.ClientX509Util;

/**
 * TLS settings of one {@link ZooKeeperLockClient}: the trust store that decides which servers are
 * genuine, the client certificate (ZooKeeper servers ask for one by default, {@code ssl.clientAuth=need}),
 * and the host name check. They become a {@code ZKClientConfig} of the client's own, so nothing is set
 * JVM-wide and two clients in one JVM may use different settings.
 *
 * <pre>{@code
 * ZooKeeperTls tls = ZooKeeperTls.builder()
 *     .trustStore(Path.of("/etc/zk/truststore.p12"), trustPassword)   // the CA of the ensemble
 *     .keyStore(Path.of("/etc/zk/client.p12"), keyPassword)           // this client's certificate
 *     .build();
 * ZooKeeperLockClient locks = ZooKeeperLockClient.builder().uri("zookeeper://zk1:2281,zk2:2281").tls(tls).build();
 * }</pre>
 *
 * <p>A trust store is required: ZooKeeper's client checks the server's host name only against a trust
 * store of its own. {@link Builder#build()} checks that the files exist and open with the passwords given
 * ({@link IllegalArgumentException} naming the file, never the password). At {@link
 * ZooKeeperLockClient.Builder#build()} one TLS handshake with the first server that accepts a connection
 * tells a certificate problem (not trusted, wrong host name, client certificate refused, a port that does
 * not serve TLS) apart from an outage: the former is a {@link BackendConfigurationException}.
 *
 * <p>Immutable and thread-safe; {@link #toString()} shows the files, never the passwords.
 */
public final class ZooKeeperTls {
  /** How long the probe waits after the handshake for the server to refuse the client's certificate. */
  private static final Duration REFUSAL_WAIT = Duration.ofMillis(200);

  private final Path trustStore;
  private final char[] trustPassword;
  private final String trustType;
  private final Path keyStore;
  private final char[] keyPassword;
  private final String keyType;
  private final boolean verifyHostname;

  private ZooKeeperTls(Builder b, String trustType, String keyType) {
    this.trustStore = b.trustStore;
    this.trustPassword = b.trustPassword == null ? null : b.trustPassword.clone();
    this.trustType = trustType;
    this.keyStore = b.keyStore;
    this.keyPassword = b.keyPassword == null ? null : b.keyPassword.clone();
    this.keyType = keyType;
    this.verifyHostname = b.verifyHostname;
  }

  /** @return a builder without settings */
  public static Builder builder() {
    return new Builder();
  }

  /** @return the trust store (PKCS#12, JKS, or PEM certificates) */
  public Path trustStore() {
    return trustStore;
  }

  /** @return the key store with this client's certificate, if any */
  public Optional<Path> keyStore() {
    return Optional.ofNullable(keyStore);
  }

  /** @return whether the server's certificate must name the host connected to */
  public boolean verifyHostname() {
    return verifyHostname;
  }

  /** The settings as ZooKeeper's client reads them; every TLS property is set, so none comes from the JVM. */
  ZKClientConfig clientConfig() {
    ZKClientConfig config = new ZKClientConfig();
    config.setProperty(ZKClientConfig.SECURE_CLIENT, "true");
    config.setProperty(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET, "org.apache.zookeeper.ClientCnxnSocketNetty");
    try (ClientX509Util names = new ClientX509Util()) {
      config.setProperty(names.getSslTruststoreLocationProperty(), trustStore.toString());
      config.setProperty(names.getSslTruststorePasswdProperty(), trustPassword == null ? "" : new String(trustPassword));
      config.setProperty(names.getSslTruststorePasswdPathProperty(), "");
      config.setProperty(names.getSslTruststoreTypeProperty(), trustType);
      config.setProperty(names.getSslKeystoreLocationProperty(), keyStore == null ? "" : keyStore.toString());
      config.setProperty(names.getSslKeystorePasswdProperty(), keyPassword == null ? "" : new String(keyPassword));
      config.setProperty(names.getSslKeystorePasswdPathProperty(), "");
      config.setProperty(names.getSslKeystoreTypeProperty(), keyType == null ? "" : keyType);
      config.setProperty(names.getSslHostnameVerificationEnabledProperty(), Boolean.toString(verifyHostname));
      config.setProperty(names.getSslContextSupplierClassProperty(), "");
    }
    return config;
  }

  /**
   * One TLS handshake with the first of {@code hosts} that accepts a connection, to tell a certificate
   * problem from an outage before ZooKeeper's client, which retries every failure the same way, hides it.
   * Hosts that do not accept a connection are skipped (an outage is for the connect to report).
   *
   * @throws BackendConfigurationException if the handshake fails or the server refuses the client's
   *     certificate right after it
   */
  void probe(List<String> hosts, Duration timeout, String description) {
    SSLContext context = sslContext();
    int millis = (int) Math.max(1, timeout.toMillis());
    for (String hostPort : hosts) {
      int colon = hostPort.lastIndexOf(':');
      String host = hostPort.substring(0, colon).replace("[", "").replace("]", "");
      int port = Integer.parseInt(hostPort.substring(colon + 1));
      Socket plain = new Socket();
      try {
        plain.connect(new InetSocketAddress(host, port), millis);
      } catch (IOException unreachable) {
        closeQuietly(plain);
        continue;
      }
      boolean handshakeDone = false;
      try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket(plain, host, port, true)) {
        SSLParameters parameters = socket.getSSLParameters();
        if (verifyHostname) {
          parameters.setEndpointIdentificationAlgorithm("HTTPS");
        }
        socket.setSSLParameters(parameters);
        socket.setSoTimeout(millis);
        socket.startHandshake();
        handshakeDone = true;
        // with TLS 1.3 the server judges the client's certificate after the client's handshake is done;
        // a refusal arrives as an alert, else the server waits for ZooKeeper's connect request
        socket.setSoTimeout((int) Math.min(millis, REFUSAL_WAIT.toMillis()));
        if (socket.getInputStream().read() < 0) {
          throw new BackendConfigurationException("could not connect to " + description + ": " + hostPort
              + " closed the TLS connection right after the handshake: it does not accept this client's certificate"
              + " (none given, or not signed by a CA it trusts); give one with ZooKeeperTls.Builder#keyStore");
        }
        return;
      } catch (SocketTimeoutException e) {
        if (handshakeDone) {
          return; // the server accepted us and waits for a request
        }
        // a server too slow to finish the handshake: an outage, for the connect to report
      } catch (SSLException e) {
        throw new BackendConfigurationException("could not connect to " + description + ": " + explain(hostPort, e), e);
      } catch (IOException e) {
        if (handshakeDone) {
          throw new BackendConfigurationException("could not connect to " + description + ": " + hostPort
              + " dropped the TLS connection right after the handshake (" + e.getMessage() + "): it does not accept"
              + " this client's certificate; give one it trusts with ZooKeeperTls.Builder#keyStore", e);
        }
        // reset while connecting: an outage
      }
    }
  }

  private static String explain(String hostPort, SSLException e) {
    String all = messages(e);
    String lower = all.toLowerCase(Locale.ROOT);
    if (lower.contains("pkix") || lower.contains("certification path") || lower.contains("certpath")) {
      return "the server's TLS certificate is not trusted (" + all + "); trust its CA with ZooKeeperTls.Builder#trustStore";
    }
    if (lower.contains("subject alternative") || lower.contains("no name matching")) {
      return "the server's TLS certificate does not name the host connected to (" + all + "); connect by a name it"
          + " holds, or see ZooKeeperTls.Builder#verifyHostname";
    }
    if (lower.contains("certificate_required") || lower.contains("bad_certificate") || lower.contains("unknown_ca")
        || lower.contains("certificate_unknown") || lower.contains("access_denied")) {
      return "the server did not accept this client's TLS certificate (" + all + "); give one signed by a CA it"
          + " trusts with ZooKeeperTls.Builder#keyStore";
    }
    if (lower.contains("terminated the handshake") || lower.contains("unrecognized ssl message")
        || lower.contains("plaintext") || lower.contains("eof")) {
      return hostPort + " does not speak TLS on that port (" + all + "): a ZooKeeper server serves TLS on its"
          + " secureClientPort, a different port from the plain clientPort";
    }
    return "the TLS handshake with " + hostPort + " failed (" + all + ")";
  }

  private static String messages(Throwable e) {
    StringBuilder out = new StringBuilder();
    for (Throwable t = e; t != null && out.length() < 400; t = t.getCause()) {
      if (t.getMessage() != null && out.indexOf(t.getMessage()) < 0) {
        out.append(out.length() == 0 ? "" : ": ").append(t.getMessage());
      }
    }
    return out.length() == 0 ? e.getClass().getSimpleName() : out.toString();
  }

  private static void closeQuietly(Socket socket) {
    try {
      socket.close();
    } catch (IOException ignored) {
      // nothing to do
    }
  }

  /** The same material as ZooKeeper's client uses, as a JDK context, for the probe. */
  private SSLContext sslContext() {
    try {
      TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      trust.init(loadTrust());
      KeyManagerFactory keys = null;
      if (keyStore != null) {
        keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        keys.init(KeyStore.getInstance(keyStore.toFile(), keyPassword), keyPassword);
      }
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(keys == null ? null : keys.getKeyManagers(), trust.getTrustManagers(), null);
      return context;
    } catch (IOException | GeneralSecurityException e) {
      throw new BackendConfigurationException("cannot read the TLS stores " + this + ": " + e.getMessage(), e);
    }
  }

  private KeyStore loadTrust() throws IOException, GeneralSecurityException {
    if (!trustType.equals("PEM")) {
      return KeyStore.getInstance(trustStore.toFile(), trustPassword);
    }
    KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
    store.load(null, null);
    int i = 0;
    try (InputStream in = Files.newInputStream(trustStore)) {
      for (java.security.cert.Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
        store.setCertificateEntry("ca-" + i++, c);
      }
    }
    return store;
  }

  @Override
  public String toString() {
    return "ZooKeeperTls[trust " + trustStore + " (" + trustType + ")"
        + (keyStore != null ? ", key " + keyStore + " (" + keyType + ")" : "")
        + (verifyHostname ? "" : ", host name not verified") + "]";
  }

  /** Builds {@link ZooKeeperTls}; not thread-safe. Everything is checked by {@link #build()}. */
  public static final class Builder {
    private Path trustStore;
    private char[] trustPassword;
    private boolean trustPem;
    private Path keyStore;
    private char[] keyPassword;
    private boolean verifyHostname = true;

    private Builder() {}

    /**
     * @param file a PKCS#12 or JKS store with the certificates of the CAs that sign the servers' certificates
     * @param password the store's password
     * @return this builder
     */
    public Builder trustStore(Path file, char[] password) {
      this.trustStore = file;
      this.trustPassword = password == null ? null : password.clone();
      this.trustPem = false;
      return this;
    }

    /**
     * @param pemFile the certificates of the CAs that sign the servers' certificates, PEM (instead of
     *     {@link #trustStore(Path, char[])})
     * @return this builder
     */
    public Builder trustCertificates(Path pemFile) {
      this.trustStore = pemFile;
      this.trustPassword = null;
      this.trustPem = true;
      return this;
    }

    /**
     * @param file a PKCS#12 or JKS store with this client's key and certificate chain, for servers that
     *     require client certificates (ZooKeeper's default); the server then also knows the client by it
     *     (scheme {@code x509}), and the client's nodes get {@code CREATOR_ALL_ACL}
     * @param password the store's (and the key's) password
     * @return this builder
     */
    public Builder keyStore(Path file, char[] password) {
      this.keyStore = file;
      this.keyPassword = password == null ? null : password.clone();
      return this;
    }

    /**
     * @param verify default {@code true}. {@code false} keeps the chain check but accepts a certificate for
     *     any host. <b>Dangerous:</b> every holder of a certificate from a trusted CA can then pose as your
     *     ensemble and see and grant locks; only for a CA that certifies your ZooKeeper servers alone
     * @return this builder
     */
    public Builder verifyHostname(boolean verify) {
      this.verifyHostname = verify;
      return this;
    }

    /**
     * @return the settings
     * @throws IllegalArgumentException if there is no trust store, a file is missing or unreadable, a store
     *     does not open with its password, the trust store holds no certificate or the key store no key
     */
    public ZooKeeperTls build() {
      if (trustStore == null) {
        throw new IllegalArgumentException("a trust store is required (trustStore or trustCertificates): ZooKeeper's"
            + " client checks the server's host name only against a trust store of its own");
      }
      String trustType = trustPem ? "PEM" : storeType("trust store", trustStore, trustPassword, false);
      if (trustPem) {
        readable("trust certificates", trustStore);
        try (InputStream in = Files.newInputStream(trustStore)) {
          if (CertificateFactory.getInstance("X.509").generateCertificates(in).isEmpty()) {
            throw new IllegalArgumentException("the trust certificates " + trustStore + " hold no certificate");
          }
        } catch (IOException | GeneralSecurityException e) {
          throw new IllegalArgumentException("cannot read the trust certificates " + trustStore + ": " + e.getMessage(), e);
        }
      }
      String keyType = keyStore == null ? null : storeType("key store", keyStore, keyPassword, true);
      return new ZooKeeperTls(this, trustType, keyType);
    }

    private static String storeType(String what, Path file, char[] password, boolean needsKey) {
      readable(what, file);
      Objects.requireNonNull(password, what + " password");
      try {
        KeyStore store = KeyStore.getInstance(file.toFile(), password);
        boolean any = false;
        for (String alias : java.util.Collections.list(store.aliases())) {
          any |= needsKey ? store.isKeyEntry(alias) : store.isCertificateEntry(alias);
        }
        if (!any) {
          throw new IllegalArgumentException("the " + what + " " + file + " holds no " + (needsKey ? "key" : "certificate"));
        }
        return store.getType().toUpperCase(Locale.ROOT);
      } catch (IOException | GeneralSecurityException e) {
        throw new IllegalArgumentException("cannot open the " + what + " " + file + " (a wrong password, or not a"
            + " PKCS#12 or JKS store): " + e.getClass().getSimpleName(), e);
      }
    }

    private static void readable(String what, Path file) {
      Objects.requireNonNull(file, what);
      if (!Files.isRegularFile(file) || !Files.isReadable(file)) {
        throw new IllegalArgumentException("the " + what + " " + file + " is not a readable file");
      }
    }
  }
}
