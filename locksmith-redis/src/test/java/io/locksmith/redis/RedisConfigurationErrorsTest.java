package io.locksmith.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.BackendConfigurationException;
import io.locksmith.BackendUnavailableException;
import io.locksmith.testkit.RedisServer;
import io.locksmith.testkit.RedisServerExtension;
import io.locksmith.testkit.TestCertificates;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Configuration mistakes are told apart from outages: a malformed URI fails {@code build()} with {@link
 * IllegalArgumentException} before anything is sent; a host that does not resolve, rejected credentials or
 * missing permissions fail with the non-transient {@link BackendConfigurationException}; only a server
 * that cannot be reached is {@link BackendUnavailableException}. Every top message carries the root
 * cause's text and never a password. TLS cases need a server with a certificate from a private CA, made
 * here by {@link TestCertificates}; the cases that need {@link RedisTls} are in {@link RedisTlsOptionsTest}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisConfigurationErrorsTest {
  @RegisterExtension
  static final RedisServerExtension REDIS = new RedisServerExtension();

  @TempDir static Path dir;

  /** {@code .invalid} never resolves (RFC 2606). */
  private static final String UNKNOWN_HOST = "no-such-host.invalid";

  @Test
  void aPortThatIsNotANumberIsRejectedAtCreate() {
    assertThatThrownBy(() -> RedisLockClient.create("redis://localhost:notaport"))
        .isExactlyInstanceOf(IllegalArgumentException.class)
        .hasMessage("the port 'notaport' of 'localhost:notaport' in 'redis://localhost:notaport' is not a number");
    assertThatThrownBy(() -> RedisLockClient.create("redis://localhost:65536"))
        .isExactlyInstanceOf(IllegalArgumentException.class)
        .hasMessage("the port 65536 of 'localhost:65536' in 'redis://localhost:65536' is not in 1..65535");
  }

  @Test
  void aMissingHostIsRejectedAtCreate() {
    assertThatThrownBy(() -> RedisLockClient.create("redis://:6421"))
        .isExactlyInstanceOf(IllegalArgumentException.class)
        .hasMessage("no host before the port in ':6421' of 'redis://:6421'");
    assertThatThrownBy(() -> RedisLockClient.create("redis://"))
        .isExactlyInstanceOf(IllegalArgumentException.class).hasMessage("no host in 'redis://'");
  }

  @Test
  void anUnencodedAtSignInThePasswordIsRejectedWithoutShowingThePassword() {
    assertThatThrownBy(() -> RedisLockClient.create("redis://locker:p@ssw0rd@127.0.0.1:6379"))
        .isExactlyInstanceOf(IllegalArgumentException.class)
        .hasMessage("the user or password in 'redis://***@127.0.0.1:6379' contains an unencoded '@'; write it"
            + " as %40")
        .hasMessageNotContaining("ssw0rd").hasMessageNotContaining("locker");
    assertThatThrownBy(() -> RedisLockClient.create("redis://locker:pa/ss@127.0.0.1:6379"))
        .isExactlyInstanceOf(IllegalArgumentException.class).hasMessageContaining("%2F")
        .hasMessageNotContaining("pa/ss").hasMessageNotContaining("locker");
    assertThatThrownBy(() -> RedisLockClient.create("redis://locker:100%@127.0.0.1:6379"))
        .isExactlyInstanceOf(IllegalArgumentException.class).hasMessageContaining("%25")
        .hasMessageNotContaining("100%");
  }

  @Test
  void aPercentEncodedAtSignInThePasswordWorks() throws Exception {
    RedisServer server = REDIS.server();
    server.command("ACL", "SETUSER", "encoded", "on", ">p@ss/w?rd", "~*", "&*", "+@all");
    String uri = "redis://encoded:p%40ss%2Fw%3Frd@" + server.host() + ":" + server.port();
    try (RedisLockClient locks = RedisLockClient.create(uri)) {
      assertThat(locks.lock("encoded").tryAcquire().orElseThrow().release()).isTrue();
    }
  }

  @Test
  void anOverflowingTimeoutIsRejectedAtBuild() {
    assertThatThrownBy(() -> RedisLockClient.builder().uri("redis://127.0.0.1:6379")
        .commandTimeout(Duration.ofSeconds(Long.MAX_VALUE)).build())
        .isExactlyInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("commandTimeout must be at most PT5M, was PT");
    assertThatThrownBy(() -> RedlockClient.builder().nodes("redis://a:1", "redis://b:1", "redis://c:1")
        .nodeTimeout(Duration.ofDays(365_000)).build())
        .isExactlyInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("nodeTimeout must be at most PT5M");
  }

  @Test
  void severalHostsWhereOneIsExpectedOrADatabaseThatIsNotANumberAreRejected() {
    assertThatThrownBy(() -> RedisLockClient.create("redis://a:6379,b:6379"))
        .isExactlyInstanceOf(IllegalArgumentException.class).hasMessageContaining("lists 2 hosts");
    assertThatThrownBy(() -> RedisLockClient.create("redis://a:6379/two"))
        .isExactlyInstanceOf(IllegalArgumentException.class)
        .hasMessage("the database 'two' in 'redis://a:6379/two' is not a number");
  }

  @Test
  void sentinelClusterAndRedlockUrisAreCheckedTheSameWay() {
    assertThatThrownBy(() -> RedisLockClient.create("redis-sentinel://s1:notaport,s2?sentinelMasterId=m"))
        .isExactlyInstanceOf(IllegalArgumentException.class).hasMessageContaining("the port 'notaport'");
    assertThatThrownBy(() -> RedisLockClient.create("redis-sentinel://s1,,s2?sentinelMasterId=m"))
        .isExactlyInstanceOf(IllegalArgumentException.class).hasMessageContaining("no host");
    assertThatThrownBy(() -> RedisLockClient.create("redis-sentinel://u:p@ss@s1:26379?sentinelMasterId=m"))
        .isExactlyInstanceOf(IllegalArgumentException.class).hasMessageContaining("%40")
        .hasMessageNotContaining("p@ss");
    assertThatThrownBy(() -> RedisLockClient.create("redis-cluster://:7000,h2:7001"))
        .isExactlyInstanceOf(IllegalArgumentException.class)
        .hasMessage("no host before the port in ':7000' of 'redis-cluster://:7000,h2:7001'");
    assertThatThrownBy(() -> RedisLockClient.create("rediss-cluster://u:p@ss@h1:7000"))
        .isExactlyInstanceOf(IllegalArgumentException.class).hasMessageContaining("%40")
        .hasMessageNotContaining("p@ss");
    assertThatThrownBy(() -> RedlockClient.builder().nodes("redis://a:1", "redis://b:notaport", "redis://c:1")
        .build()).isExactlyInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("the port 'notaport' of 'b:notaport'");
  }

  @Test
  void anUnknownHostIsAConfigurationErrorWithTheResolversText() {
    String uri = "redis://" + UNKNOWN_HOST + ":6379";
    assertThatThrownBy(() -> RedisLockClient.create(uri))
        .isExactlyInstanceOf(BackendConfigurationException.class)
        .hasMessageStartingWith("could not connect to " + uri + ": unknown host (")
        .hasMessageContaining(UNKNOWN_HOST).hasMessageNotContaining("within");
    String sentinel = "redis-sentinel://" + UNKNOWN_HOST + ":26379?sentinelMasterId=m";
    assertThatThrownBy(() -> RedisLockClient.create(sentinel))
        .isExactlyInstanceOf(BackendConfigurationException.class)
        .hasMessageStartingWith("could not connect to " + sentinel + ": unknown host (");
    String cluster = "redis-cluster://" + UNKNOWN_HOST + ":7000";
    assertThatThrownBy(() -> RedisLockClient.create(cluster))
        .isExactlyInstanceOf(BackendConfigurationException.class)
        .hasMessageStartingWith("could not connect to " + cluster + ": unknown host (");
    RedisServer server = REDIS.server();
    assertThatThrownBy(() -> RedlockClient.builder().nodes("redis://" + UNKNOWN_HOST + ":1",
        "redis://" + UNKNOWN_HOST + ":2", server.uri()).build())
        .isExactlyInstanceOf(BackendConfigurationException.class)
        .hasMessageStartingWith("only 1 of 3 Redlock nodes could be reached, 2 needed")
        .hasMessageContaining("unknown host (");
  }

  @Test
  void rejectedCredentialsAndMissingPermissionsAreConfigurationErrors() throws Exception {
    RedisServer server = REDIS.server();
    server.command("ACL", "SETUSER", "locker", "on", ">s3cret", "~*", "&*", "+@all");
    String wrong = "redis://locker:wrong@" + server.host() + ":" + server.port();
    assertThatThrownBy(() -> RedisLockClient.create(wrong))
        .isExactlyInstanceOf(BackendConfigurationException.class)
        .hasMessageStartingWith("Redis refused to connect to redis://" + server.host() + ":" + server.port()
            + ": WRONGPASS")
        .hasMessageNotContaining("wrong@").hasMessageNotContaining("within");
    // a user that may connect but not load scripts
    server.command("ACL", "SETUSER", "reader", "on", ">s3cret", "~*", "+@connection", "+get");
    String reader = "redis://reader:s3cret@" + server.host() + ":" + server.port();
    assertThatThrownBy(() -> RedisLockClient.create(reader))
        .isExactlyInstanceOf(BackendConfigurationException.class)
        .hasMessageContaining("NOPERM").hasMessageNotContaining("s3cret");
    String noSuchDb = server.uri() + "/999";
    assertThatThrownBy(() -> RedisLockClient.create(noSuchDb))
        .isExactlyInstanceOf(BackendConfigurationException.class)
        .hasMessage("Redis refused to connect to " + noSuchDb + ": ERR DB index is out of range");
  }

  /**
   * Regression: Lettuce's connect can lose the server's answer to the handshake when that answer comes
   * before its connect listener runs (a local server rejecting the password at once, a busy machine), and
   * then reports "RedisHandshakeHandler not registered": the rejected password was told as an outage.
   * Seen once in a CI run of the case above; here about once in 300 connects before the fix.
   */
  @Test
  void rejectedCredentialsAreAConfigurationErrorEveryTime() {
    RedisServer server = REDIS.server();
    server.command("ACL", "SETUSER", "locker", "on", ">s3cret", "~*", "&*", "+@all");
    String wrong = "redis://locker:wrong@" + server.host() + ":" + server.port();
    Map<String, Integer> outcomes = new TreeMap<>();
    for (int i = 0; i < ATTEMPTS; i++) {
      try {
        RedisLockClient.create(wrong).close();
        outcomes.merge("connected", 1, Integer::sum);
      } catch (RuntimeException e) {
        outcomes.merge(e.getClass().getSimpleName() + ": " + e.getMessage().replaceAll(":\\d+", ":<port>"), 1,
            Integer::sum);
      }
    }
    assertThat(outcomes).as("the outcome of %d connects with a wrong password", ATTEMPTS).containsOnlyKeys(
        "BackendConfigurationException: Redis refused to connect to redis://" + server.host()
            + ":<port>: WRONGPASS invalid username-password pair or user is disabled. (check the user and"
            + " password in the URI; percent-encode reserved characters in them)");
  }

  private static final int ATTEMPTS = 600;

  @Test
  void aRefusedConnectionIsAnOutageThatSaysRefusedNotTimedOut() {
    int deadPort;
    try (RedisServer server = RedisServer.start()) {
      deadPort = server.port();
    }
    String uri = "redis://127.0.0.1:" + deadPort;
    RedisLockClient.create(REDIS.server().uri()).close(); // Lettuce's and Netty's start-up off the clock
    long start = System.nanoTime();
    assertThatThrownBy(() -> RedisLockClient.builder().uri(uri).commandTimeout(Duration.ofSeconds(2)).build())
        .isExactlyInstanceOf(BackendUnavailableException.class)
        .hasMessage("Redis unavailable, could not connect to " + uri + ": Connection refused: /127.0.0.1:"
            + deadPort);
    assertThat(System.nanoTime() - start).as("refused at once, not after the timeout")
        .isLessThan(Duration.ofMillis(1500).toNanos());
  }

  @Test
  void aServerThatDoesNotAnswerIsAnOutageThatSaysItTimedOut() throws Exception {
    try (RedisServer server = RedisServer.start()) {
      server.pause(); // the kernel still accepts the connection; nothing answers
      try {
        assertThatThrownBy(() -> RedisLockClient.builder().uri(server.uri())
            .commandTimeout(Duration.ofMillis(300)).build())
            .isExactlyInstanceOf(BackendUnavailableException.class)
            .hasMessageStartingWith("Redis unavailable, could not connect to " + server.uri() + ": ")
            .hasMessageContaining("timed out");
      } finally {
        server.resume();
      }
    }
  }

  @Test
  void anUntrustedCertificateIsAConfigurationErrorNotAnOutage() {
    TestCertificates pki = TestCertificates.create(dir);
    int tlsPort = TestCertificates.freePort();
    try (RedisServer server = RedisServer.builder()
        .extraArgs(pki.redisTlsArgs(tlsPort, pki.serverCertificate(), false)).start()) {
      // the JVM's default trust store does not know the private CA
      String uri = "rediss://127.0.0.1:" + tlsPort;
      assertThatThrownBy(() -> RedisLockClient.create(uri))
          .isExactlyInstanceOf(BackendConfigurationException.class)
          .hasMessageStartingWith("could not connect to " + uri + ": the server's TLS certificate is not trusted (")
          .hasMessageContaining("unable to find valid certification path")
          .hasMessageNotContaining("within");
      assertThat(server.isRunning()).isTrue();
    }
  }

  @Test
  void tlsToAPlainTextPortIsAConfigurationErrorFoundAfterTheHandshakeTimesOut() {
    RedisServer plain = REDIS.server();
    String uri = "rediss://127.0.0.1:" + plain.port();
    assertThatThrownBy(() -> RedisLockClient.builder().uri(uri).commandTimeout(Duration.ofMillis(500)).build())
        .isExactlyInstanceOf(BackendConfigurationException.class)
        .hasMessage("could not connect to " + uri + ": 127.0.0.1:" + plain.port() + " answered a plain-text"
            + " PING: it does not serve TLS on that port (use a redis:// URI, or the server's TLS port)");
  }
}
