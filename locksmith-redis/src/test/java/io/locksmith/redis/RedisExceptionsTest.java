package io.locksmith.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;
import io.locksmith.BackendConfigurationException;
import io.locksmith.BackendUnavailableException;
import io.locksmith.LockException;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.dns.DefaultDnsQuestion;
import io.netty.handler.codec.dns.DnsRecordType;
import io.netty.handler.ssl.NotSslRecordException;
import io.netty.handler.ssl.SslHandshakeTimeoutException;
import io.netty.resolver.dns.DnsNameResolverTimeoutException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.security.cert.CertificateException;
import java.util.concurrent.CompletionException;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The one translation point from Lettuce's exceptions to Locksmith's. */
@Tag("unit")
class RedisExceptionsTest {
  @Test
  void transientRepliesMeanUnavailableOthersMeanRefused() {
    for (String reply : new String[] {"LOADING Redis is loading", "READONLY You can't write against a read only replica.",
        "MASTERDOWN Link with MASTER is down", "BUSY Redis is busy running a script", "TRYAGAIN", "CLUSTERDOWN"}) {
      assertThat(RedisExceptions.translate(new RedisCommandExecutionException(reply), "acquire"))
          .as(reply).isInstanceOf(BackendUnavailableException.class).hasMessageContaining(reply);
    }
    RuntimeException refused = RedisExceptions.translate(
        new CompletionException(new RedisCommandExecutionException("OOM command not allowed")), "acquire");
    assertThat(refused).isExactlyInstanceOf(LockException.class).hasMessage("Redis refused to acquire: OOM command"
        + " not allowed");
    assertThat(RedisExceptions.translate(new RedisCommandTimeoutException("timed out"), "release"))
        .isInstanceOf(BackendUnavailableException.class).hasCauseInstanceOf(RedisCommandTimeoutException.class);
  }

  @Test
  void credentialsPermissionsAndMissingDatabasesAreConfigurationErrors() {
    for (String reply : new String[] {"WRONGPASS invalid username-password pair or user is disabled.",
        "NOAUTH Authentication required.", "NOPERM this user has no permissions to run the 'evalsha' command",
        "ERR DB index is out of range", "DENIED Redis is running in protected mode"}) {
      RuntimeException e = RedisExceptions.translate(new RedisConnectionException("Unable to connect",
          new CompletionException(new RedisCommandExecutionException(reply))), "connect to redis://h:1");
      assertThat(e).as(reply).isExactlyInstanceOf(BackendConfigurationException.class)
          .hasMessageStartingWith("Redis refused to connect to redis://h:1: " + reply);
    }
  }

  @Test
  void tlsAndUnknownHostsAreConfigurationErrorsButTheirTimeoutsAreNot() {
    RuntimeException untrusted = RedisExceptions.translate(new RedisConnectionException("Unable to connect",
        new CompletionException(new SSLHandshakeException("PKIX path building failed: unable to find valid"
            + " certification path to requested target"))), "connect to rediss://h:1");
    assertThat(untrusted).isExactlyInstanceOf(BackendConfigurationException.class)
        .hasMessageStartingWith("could not connect to rediss://h:1: the server's TLS certificate is not trusted"
            + " (PKIX path building failed: unable to find valid certification path to requested target)");
    SSLHandshakeException mismatch = new SSLHandshakeException("No subject alternative DNS name matching h found.");
    mismatch.initCause(new CertificateException("No subject alternative DNS name matching h found."));
    assertThat(RedisExceptions.translate(mismatch, "connect to rediss://h:1"))
        .isExactlyInstanceOf(BackendConfigurationException.class)
        .hasMessageContaining("does not name the host connected to (No subject alternative DNS name matching h");
    assertThat(RedisExceptions.translate(new DecoderException(new NotSslRecordException("not an SSL/TLS record:"
        + " 2d4552520d0a")), "connect to rediss://h:1"))
        .isExactlyInstanceOf(BackendConfigurationException.class).hasMessageContaining("did not answer in TLS");
    assertThat(RedisExceptions.translate(new RedisConnectionException("Unable to connect", new UnknownHostException(
        "Failed to resolve 'nowhere.invalid'")), "connect to redis://nowhere.invalid:6379"))
        .isExactlyInstanceOf(BackendConfigurationException.class)
        .hasMessage("could not connect to redis://nowhere.invalid:6379: unknown host (Failed to resolve"
            + " 'nowhere.invalid')");

    // a handshake that timed out, and a DNS server that did not answer, are outages: they may pass
    assertThat(RedisExceptions.translate(new RedisConnectionException("Unable to connect",
        new SslHandshakeTimeoutException("handshake timed out after 2000ms")), "connect to rediss://h:1"))
        .isExactlyInstanceOf(BackendUnavailableException.class)
        .hasMessage("Redis unavailable, could not connect to rediss://h:1: handshake timed out after 2000ms");
    UnknownHostException dnsDown = new UnknownHostException("Failed to resolve 'h' after 2 queries");
    dnsDown.initCause(new DnsNameResolverTimeoutException(new InetSocketAddress(0),
        new DefaultDnsQuestion("h", DnsRecordType.A), "query timed out"));
    assertThat(RedisExceptions.translate(dnsDown, "connect to redis://h:1"))
        .isExactlyInstanceOf(BackendUnavailableException.class);
  }

  @Test
  void aClusterSeedsConfigurationFailureCountsEvenWhenAnotherSeedTimedOut() {
    RedisException noPartitions = new RedisException("Cannot retrieve cluster partitions from [a, b]");
    noPartitions.addSuppressed(new RedisCommandTimeoutException("Command timed out after 2 second(s)"));
    noPartitions.addSuppressed(new SSLHandshakeException("PKIX path building failed"));
    assertThat(RedisExceptions.translate(noPartitions, "connect to rediss-cluster://a:1,b:1"))
        .isExactlyInstanceOf(BackendConfigurationException.class).hasMessageContaining("not trusted");
  }

  @Test
  void theTopMessageCarriesTheRootCausesTextAndSaysTimedOutOnlyForATimeout() {
    ConnectException refused = new ConnectException("Connection refused");
    Exception annotated = new IOException("Connection refused: /127.0.0.1:1", refused);
    RuntimeException e = RedisExceptions.translate(new RedisConnectionException(
        "Unable to connect to 127.0.0.1/<unresolved>:1", new CompletionException(annotated)),
        "connect to redis://127.0.0.1:1");
    assertThat(e).isExactlyInstanceOf(BackendUnavailableException.class)
        .hasMessage("Redis unavailable, could not connect to redis://127.0.0.1:1: Connection refused: /127.0.0.1:1");
  }

  @Test
  void timeoutsAndReadOnlyRepliesAreWhatMakesASentinelClientRecheckItsMaster() {
    assertThat(RedisExceptions.mayBeStaleMaster(new CompletionException(new RedisCommandTimeoutException("t"))))
        .isTrue();
    assertThat(RedisExceptions.mayBeStaleMaster(new RedisCommandExecutionException(
        "READONLY You can't write against a read only replica."))).isTrue();
    assertThat(RedisExceptions.mayBeStaleMaster(new RedisCommandExecutionException("OOM command not allowed")))
        .isFalse();
    assertThat(RedisExceptions.mayBeStaleMaster(new IllegalStateException("connection closed"))).isFalse();
  }
}
