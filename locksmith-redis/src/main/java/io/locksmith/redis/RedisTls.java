package io.locksmith.redis;

import io.lettuce.core.SslOptions;
import io.lettuce.core.SslVerifyMode;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collections;
import java.util.Objects;
import java.util.Optional;

/**
 * TLS settings of one client: which certificate authorities it trusts, the certificate it presents when
 * the server requires one (mutual TLS), and whether it checks that the server's certificate names the
 * host it connects to. Used with a {@code rediss://}, {@code rediss-sentinel://} or {@code
 * rediss-cluster://} URI ({@link RedisLockClient.Builder#tls(RedisTls)}) and for every node of a
 * {@link RedlockClient} ({@link RedlockClient.Builder#tls(RedisTls)}).
 *
 * <pre>{@code
 * RedisTls tls = RedisTls.builder()
 *     .trustCertificates(Path.of("/etc/redis/tls/ca.crt"))          // the private CA, PEM
 *     .clientCertificate(Path.of("/etc/redis/tls/client.crt"),      // only if the server asks for one
 *         Path.of("/etc/redis/tls/client.key"))
 *     .build();
 * RedisLockClient locks = RedisLockClient.builder().uri("rediss://redis.internal:6380").tls(tls).build();
 * }</pre>
 *
 * <p><b>Trust.</b> Without {@link Builder#trustCertificates} or {@link Builder#trustStore}, the JVM's
 * default trust store decides (the public CAs, or whatever {@code javax.net.ssl.trustStore} names).
 * Either of them replaces it for this client only.
 *
 * <p><b>Host name.</b> Verified by default: the server's certificate must name the host of the URI (as
 * a DNS name, or an IP address for an IP literal) in its subject alternative names. {@link
 * Builder#verifyHostname(boolean) verifyHostname(false)} keeps the chain check but drops this one.
 *
 * <p><b>Files</b> are checked when {@link Builder#build()} runs (they exist, parse, and the passwords
 * open them) and are read again for every new connection, so replacing them rotates certificates for
 * connections made afterwards. A connection that fails because of them fails with {@link
 * io.locksmith.BackendConfigurationException}.
 *
 * <p>Immutable and thread-safe. {@link #toString()} never shows passwords.
 */
public final class RedisTls {
  private static final RedisTls DEFAULTS = new Builder().build();

  private final Path trustCertificates;
  private final Path trustStore;
  private final char[] trustStorePassword;
  private final Path keyStore;
  private final char[] keyStorePassword;
  private final Path clientCertificate;
  private final Path clientKey;
  private final boolean verifyHostname;

  private RedisTls(Builder b) {
    this.trustCertificates = b.trustCertificates;
    this.trustStore = b.trustStore;
    this.trustStorePassword = copy(b.trustStorePassword);
    this.keyStore = b.keyStore;
    this.keyStorePassword = copy(b.keyStorePassword);
    this.clientCertificate = b.clientCertificate;
    this.clientKey = b.clientKey;
    this.verifyHostname = b.verifyHostname;
  }

  /** @return the JVM's trust store, host names verified, no client certificate */
  public static RedisTls defaults() {
    return DEFAULTS;
  }

  /** @return a builder starting from {@link #defaults()} */
  public static Builder builder() {
    return new Builder();
  }

  /** @return the PEM file of trusted CA certificates, if one was given */
  public Optional<Path> trustCertificates() {
    return Optional.ofNullable(trustCertificates);
  }

  /** @return the trust store file, if one was given */
  public Optional<Path> trustStore() {
    return Optional.ofNullable(trustStore);
  }

  /** @return the key store holding the client certificate, if one was given */
  public Optional<Path> keyStore() {
    return Optional.ofNullable(keyStore);
  }

  /** @return the PEM file of the client certificate chain, if one was given */
  public Optional<Path> clientCertificate() {
    return Optional.ofNullable(clientCertificate);
  }

  /** @return whether the server's certificate must name the host connected to; true by default */
  public boolean verifyHostname() {
    return verifyHostname;
  }

  /** Lettuce's verification mode: chain and host name, or chain only. */
  SslVerifyMode verifyMode() {
    return verifyHostname ? SslVerifyMode.FULL : SslVerifyMode.CA;
  }

  /**
   * @param handshakeTimeout bound on the TLS handshake (Lettuce's default is 10 s, longer than our
   *     command timeout, which would report a stalled handshake as a generic connect timeout)
   */
  SslOptions toSslOptions(Duration handshakeTimeout) {
    SslOptions.Builder b = SslOptions.builder().jdkSslProvider().handshakeTimeout(handshakeTimeout);
    if (trustCertificates != null) {
      b.trustManager(trustCertificates.toFile());
    } else if (trustStore != null) {
      b.truststore(SslOptions.Resource.from(trustStore.toFile()), trustStorePassword.clone());
    }
    if (keyStore != null) {
      b.keystore(SslOptions.Resource.from(keyStore.toFile()), keyStorePassword.clone());
    } else if (clientCertificate != null) {
      b.keyManager(clientCertificate.toFile(), clientKey.toFile(), null);
    }
    return b.build();
  }

  @Override
  public String toString() {
    StringBuilder s = new StringBuilder("RedisTls{trust=");
    s.append(trustCertificates != null ? trustCertificates : trustStore != null ? trustStore : "JVM default");
    if (keyStore != null || clientCertificate != null) {
      s.append(", client certificate=").append(keyStore != null ? keyStore : clientCertificate);
    }
    return s.append(", verifyHostname=").append(verifyHostname).append('}').toString();
  }

  private static char[] copy(char[] password) {
    return password == null ? null : password.clone();
  }

  /** Builds {@link RedisTls}; not thread-safe. Everything is validated by {@link #build()}. */
  public static final class Builder {
    private Path trustCertificates;
    private Path trustStore;
    private char[] trustStorePassword;
    private Path keyStore;
    private char[] keyStorePassword;
    private Path clientCertificate;
    private Path clientKey;
    private boolean verifyHostname = true;

    private Builder() {}

    /**
     * Trusts exactly the CA certificates in a PEM file (one or more {@code -----BEGIN CERTIFICATE-----}
     * blocks), e.g. a private CA's {@code ca.crt}, instead of the JVM's trust store.
     *
     * @param pemFile the file; not together with {@link #trustStore}
     * @return this builder
     */
    public Builder trustCertificates(Path pemFile) {
      this.trustCertificates = pemFile;
      return this;
    }

    /**
     * Trusts the certificates in a key store file (PKCS#12 or JKS) instead of the JVM's trust store.
     *
     * @param file the trust store; not together with {@link #trustCertificates}
     * @param password its password (copied), or {@code null} for a store without one
     * @return this builder
     */
    public Builder trustStore(Path file, char[] password) {
      this.trustStore = file;
      this.trustStorePassword = password == null ? new char[0] : password.clone();
      return this;
    }

    /**
     * The client certificate for mutual TLS, from a key store file (PKCS#12 or JKS) with one private
     * key entry whose password is the store's.
     *
     * @param file the key store; not together with {@link #clientCertificate}
     * @param password its password (copied)
     * @return this builder
     */
    public Builder keyStore(Path file, char[] password) {
      this.keyStore = file;
      this.keyStorePassword = password == null ? null : password.clone();
      return this;
    }

    /**
     * The client certificate for mutual TLS, from PEM files: the certificate (optionally followed by
     * its intermediates) and its unencrypted PKCS#8 key ({@code -----BEGIN PRIVATE KEY-----}, as
     * {@code openssl genpkey} writes it). For a key that must stay encrypted at rest, use a {@link
     * #keyStore key store}.
     *
     * @param certificateChainPem the certificate file
     * @param privateKeyPem the key file; not together with {@link #keyStore}
     * @return this builder
     */
    public Builder clientCertificate(Path certificateChainPem, Path privateKeyPem) {
      this.clientCertificate = certificateChainPem;
      this.clientKey = privateKeyPem;
      return this;
    }

    /**
     * Whether the server's certificate must name the host this client connects to; default true.
     *
     * <p><b>Dangerous when false:</b> any server holding a certificate from a trusted CA is then
     * accepted for any host name. With a CA that signs certificates for other services too, one of
     * those services (or whoever stole its key) can impersonate Redis, see the lock traffic and grant
     * locks. Turn it off only for a CA that issues certificates to your Redis servers alone, e.g. when
     * the servers are reached through addresses their certificates cannot name.
     *
     * @param verify false to check the chain only
     * @return this builder
     */
    public Builder verifyHostname(boolean verify) {
      this.verifyHostname = verify;
      return this;
    }

    /**
     * Checks the settings and the files they name.
     *
     * @return the settings
     * @throws NullPointerException if a client certificate is given without its key, or a key store
     *     without its password
     * @throws IllegalArgumentException if both trust sources or both client certificate sources are
     *     given, or a file does not exist, cannot be read, holds no certificate (or key), or its password
     *     does not open it; the message names the file, never a password
     */
    public RedisTls build() {
      if (trustCertificates != null && trustStore != null) {
        throw new IllegalArgumentException("give the trusted certificates either as a PEM file or as a trust"
            + " store, not both");
      }
      if (keyStore != null && clientCertificate != null) {
        throw new IllegalArgumentException("give the client certificate either as a key store or as PEM files,"
            + " not both");
      }
      if (trustCertificates != null) {
        checkCertificates("trusted certificates", trustCertificates);
      }
      if (trustStore != null) {
        KeyStore store = loadStore("trust store", trustStore, trustStorePassword);
        if (count(store, false) == 0) {
          throw new IllegalArgumentException("trust store " + trustStore + " holds no certificate");
        }
      }
      if (keyStore != null) {
        Objects.requireNonNull(keyStorePassword, "key store password");
        KeyStore store = loadStore("key store", keyStore, keyStorePassword);
        if (count(store, true) != 1) {
          throw new IllegalArgumentException("key store " + keyStore + " must hold exactly one private key, has "
              + count(store, true));
        }
      }
      if (clientCertificate != null) {
        Objects.requireNonNull(clientKey, "client key");
        checkCertificates("client certificate", clientCertificate);
        checkKey(clientKey);
      }
      return new RedisTls(this);
    }

    private static void checkCertificates(String what, Path file) {
      try (InputStream in = Files.newInputStream(readable(what, file))) {
        if (CertificateFactory.getInstance("X.509").generateCertificates(in).isEmpty()) {
          throw new IllegalArgumentException(what + " file " + file + " holds no PEM certificate");
        }
      } catch (IOException | GeneralSecurityException e) {
        throw new IllegalArgumentException(what + " file " + file + " cannot be read as PEM certificates: " + e,
            e);
      }
    }

    private static void checkKey(Path file) {
      String text;
      try {
        text = Files.readString(readable("client key", file), StandardCharsets.US_ASCII);
      } catch (IOException e) {
        throw new IllegalArgumentException("client key file " + file + " cannot be read: " + e, e);
      }
      String expected = "-----BEGIN PRIVATE KEY-----";
      if (!text.contains(expected)) {
        boolean pkcs1 = text.contains("-----BEGIN RSA PRIVATE KEY-----")
            || text.contains("-----BEGIN EC PRIVATE KEY-----");
        String hint = pkcs1
            ? " (it is a PKCS#1/SEC1 key: convert it with 'openssl pkcs8 -topk8 -nocrypt -in key -out key8')"
            : text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----")
            ? " (it is encrypted: put the key and certificate in a PKCS#12 key store and use keyStore(...))"
            : "";
        throw new IllegalArgumentException("client key file " + file + " holds no " + expected + " block" + hint);
      }
    }

    private static KeyStore loadStore(String what, Path file, char[] password) {
      try (InputStream in = Files.newInputStream(readable(what, file))) {
        KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType()); // loads JKS files too
        store.load(in, password);
        return store;
      } catch (IOException | GeneralSecurityException e) {
        throw new IllegalArgumentException(what + " " + file + " cannot be opened (wrong password or not PKCS#12"
            + " or JKS): " + e.getMessage(), e);
      }
    }

    private static int count(KeyStore store, boolean keys) {
      try {
        int n = 0;
        for (String alias : Collections.list(store.aliases())) {
          if (keys ? store.isKeyEntry(alias) : store.getCertificate(alias) != null) {
            n++;
          }
        }
        return n;
      } catch (GeneralSecurityException e) {
        throw new IllegalArgumentException("cannot list the entries of a key store: " + e, e);
      }
    }

    private static Path readable(String what, Path file) {
      Objects.requireNonNull(file, what);
      if (!Files.isRegularFile(file) || !Files.isReadable(file)) {
        throw new IllegalArgumentException(what + " file " + file + " does not exist or cannot be read");
      }
      return file;
    }
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof RedisTls t && Objects.equals(trustCertificates, t.trustCertificates)
        && Objects.equals(trustStore, t.trustStore) && Arrays.equals(trustStorePassword, t.trustStorePassword)
        && Objects.equals(keyStore, t.keyStore) && Arrays.equals(keyStorePassword, t.keyStorePassword)
        && Objects.equals(clientCertificate, t.clientCertificate) && Objects.equals(clientKey, t.clientKey)
        && verifyHostname == t.verifyHostname;
  }

  @Override
  public int hashCode() {
    return Objects.hash(trustCertificates, trustStore, keyStore, clientCertificate, clientKey, verifyHostname);
  }
}
