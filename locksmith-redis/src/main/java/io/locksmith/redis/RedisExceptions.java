package io.locksmith.redis;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisNoScriptException;
import io.locksmith.BackendConfigurationException;
import io.locksmith.BackendUnavailableException;
import io.locksmith.LockException;
import io.netty.handler.ssl.NotSslRecordException;
import io.netty.handler.ssl.SslHandshakeTimeoutException;
import java.net.UnknownHostException;
import java.security.GeneralSecurityException;
import java.security.cert.CertificateException;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import javax.net.ssl.SSLException;

/**
 * The one place where Lettuce's exceptions become Locksmith's. Three outcomes:
 *
 * <ul>
 *   <li>{@link BackendUnavailableException}: the server could not be reached or did not answer in time,
 *       or answered "not now" (loading, busy, failing over). Transient: a later attempt may work.
 *   <li>{@link BackendConfigurationException}: the configuration does not fit the server: TLS
 *       (untrusted certificate, host name mismatch, a port that does not speak TLS, a missing client
 *       certificate), a host name that does not resolve, rejected credentials or missing permissions, a
 *       database the server does not have. Not transient.
 *   <li>a plain {@link LockException}: any other error reply (out of memory, a script error).
 * </ul>
 *
 * <p>The message names what could not be done and carries the root cause's own text, so that it can be
 * read without the cause chain; it says "within N ms" only when the failure was a timeout. The original
 * exception is kept as the cause.
 */
final class RedisExceptions {
  private RedisExceptions() {}

  static Throwable unwrap(Throwable t) {
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  static boolean isNoScript(Throwable t) {
    Throwable u = unwrap(t);
    return u instanceof RedisNoScriptException
        || (u instanceof RedisCommandExecutionException && String.valueOf(u.getMessage()).startsWith("NOSCRIPT"));
  }

  /**
   * A timeout or a {@code READONLY} reply: what a client sees when its connection still points at a
   * master that hangs or has been demoted.
   */
  static boolean mayBeStaleMaster(Throwable t) {
    Throwable u = unwrap(t);
    return u instanceof RedisCommandTimeoutException
        || (u instanceof RedisCommandExecutionException && String.valueOf(u.getMessage()).startsWith("READONLY"));
  }

  /**
   * A {@code TRYAGAIN} reply: a multi-key command on a Cluster slot that is being migrated found only
   * some of its keys; it was not executed and may be sent again.
   */
  static boolean isTryAgain(Throwable t) {
    Throwable u = unwrap(t);
    return u instanceof RedisCommandExecutionException && String.valueOf(u.getMessage()).startsWith("TRYAGAIN");
  }

  /** Error replies that mean "not now" (loading, busy script, demoted master, failover, cluster down). */
  private static final List<String> TRANSIENT =
      List.of("LOADING", "BUSY", "READONLY", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN");

  /**
   * Error replies that mean the client's configuration does not fit the server: credentials, ACL
   * permissions, protected mode, a database the server does not have, a command renamed away.
   */
  private static final List<String> CONFIGURATION = List.of("WRONGPASS", "NOAUTH", "NOPERM", "DENIED",
      "ERR AUTH", "ERR invalid password", "ERR Client sent AUTH", "ERR invalid username-password",
      "ERR DB index is out of range", "ERR unknown command");

  /**
   * Whether the failure is a timeout of some kind: no answer, not a refusal. A handshake that timed
   * out is one (see {@link RedisBackend}'s check for a plain-text port behind {@code rediss://}).
   */
  static boolean isTimeout(Throwable t) {
    for (Throwable c : related(t)) {
      if (c instanceof RedisCommandTimeoutException || c instanceof TimeoutException
          || c instanceof SslHandshakeTimeoutException || c instanceof java.net.SocketTimeoutException
          || c instanceof io.netty.channel.ConnectTimeoutException) {
        return true;
      }
    }
    return false;
  }

  /**
   * Translates a failure of {@code what} (e.g. {@code "acquire lock 'x'"}, {@code "connect to
   * redis://h:6379"}).
   *
   * @return the exception to throw or to complete with; never null
   */
  static RuntimeException translate(Throwable t, String what) {
    Throwable u = unwrap(t);
    if (u instanceof LockException le) {
      return le;
    }
    for (Throwable c = u; c != null; c = c.getCause()) {
      if (c instanceof RedisCommandExecutionException) { // e.g. WRONGPASS wrapped in a connect failure
        String reply = String.valueOf(c.getMessage());
        if (TRANSIENT.stream().anyMatch(reply::startsWith)) {
          return new BackendUnavailableException("Redis cannot serve now, could not " + what + ": " + reply, u);
        }
        if (CONFIGURATION.stream().anyMatch(reply::startsWith)) {
          return new BackendConfigurationException("Redis refused to " + what + ": " + reply + replyHint(reply), u);
        }
        return new LockException("Redis refused to " + what + ": " + reply, u);
      }
    }
    // evidence of a configuration problem wins over a timeout: on a Cluster one seed may have timed out
    // while another refused our certificate, and the certificate will still be refused next time
    String tls = tlsProblem(u);
    if (tls != null) {
      return new BackendConfigurationException("could not " + what + ": " + tls, u);
    }
    UnknownHostException unknown = find(u, UnknownHostException.class);
    if (unknown != null && !dnsTimeout(unknown)) {
      return new BackendConfigurationException("could not " + what + ": unknown host (" + shorten(unknown.getMessage())
          + ")", u);
    }
    return new BackendUnavailableException("Redis unavailable, could not " + what + ": " + rootText(u), u);
  }

  /** A configuration failure found by a check of our own rather than by Lettuce, e.g. a protocol probe. */
  static BackendConfigurationException configuration(String what, String problem, Throwable cause) {
    return new BackendConfigurationException("could not " + what + ": " + problem, cause);
  }

  private static String replyHint(String reply) {
    if (reply.startsWith("WRONGPASS") || reply.startsWith("NOAUTH") || reply.startsWith("ERR AUTH")
        || reply.startsWith("ERR invalid") || reply.startsWith("ERR Client sent AUTH")) {
      return " (check the user and password in the URI; percent-encode reserved characters in them)";
    }
    if (reply.startsWith("NOPERM")) {
      return " (the ACL user lacks a permission the client needs; see docs/redis.md)";
    }
    return "";
  }

  /**
   * @return what went wrong in TLS, with the TLS library's own text and a hint, or null if the failure
   *     is not a TLS problem. A handshake timeout is not one here: it looks the same as a hung server.
   */
  private static String tlsProblem(Throwable u) {
    NotSslRecordException notTls = find(u, NotSslRecordException.class);
    if (notTls != null) {
      return "the server did not answer in TLS (is it a plain-text port? then use redis://): "
          + shorten(notTls.getMessage());
    }
    CertificateException cert = find(u, CertificateException.class);
    SSLException ssl = find(u, SSLException.class);
    GeneralSecurityException security = find(u, GeneralSecurityException.class);
    if (cert == null && ssl == null && security == null) {
      return null;
    }
    String text = rootText(ssl != null ? ssl : cert != null ? cert : security);
    String all = chainText(u);
    if (all.contains("No subject alternative") || all.contains("No name matching")) {
      return "the server's TLS certificate does not name the host connected to (" + text + "); connect by a"
          + " name the certificate lists, or see RedisTls.Builder#verifyHostname";
    }
    if (all.contains("PKIX path") || all.contains("unable to find valid certification path")
        || all.contains("signature check failed") || all.contains("unknown_ca")) {
      return "the server's TLS certificate is not trusted (" + text + "); trust its CA with"
          + " RedisTls.Builder#trustCertificates or #trustStore";
    }
    if (all.contains("certificate_required") || all.contains("bad_certificate")
        || all.contains("handshake_failure") && all.contains("Received fatal alert")) {
      return "the server did not accept this client's TLS certificate (" + text + "); it may require one: see"
          + " RedisTls.Builder#keyStore and #clientCertificate";
    }
    if (all.contains("Certificate expired") || all.contains("NotAfter") || all.contains("certificate_expired")) {
      return "a TLS certificate has expired (" + text + ")";
    }
    return "TLS failed (" + text + ")";
  }

  /** A DNS lookup that timed out says nothing about the name: the resolver may be down for a moment. */
  private static boolean dnsTimeout(UnknownHostException e) {
    for (Throwable c = e; c != null; c = c.getCause()) {
      if (c.getClass().getSimpleName().contains("Timeout")) {
        return true;
      }
    }
    return false;
  }

  /** The first exception of {@code type} among {@code t}, its causes and their suppressed exceptions. */
  private static <T extends Throwable> T find(Throwable t, Class<T> type) {
    for (Throwable c : related(t)) {
      // a handshake that timed out is a timeout, not a TLS verdict
      if (type.isInstance(c) && !(c instanceof SslHandshakeTimeoutException)) {
        return type.cast(c);
      }
    }
    return null;
  }

  /**
   * {@code t}, its causes and the suppressed exceptions of each, depth first, each once. Lettuce reports
   * the failures of a Cluster's seed nodes as suppressed exceptions of one "cannot retrieve partitions".
   */
  private static List<Throwable> related(Throwable t) {
    List<Throwable> out = new java.util.ArrayList<>();
    java.util.Set<Throwable> seen = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    java.util.Deque<Throwable> todo = new java.util.ArrayDeque<>();
    if (t != null) {
      todo.push(t);
    }
    while (!todo.isEmpty() && out.size() < 100) {
      Throwable c = todo.pop();
      if (!seen.add(c)) {
        continue;
      }
      out.add(c);
      Throwable[] suppressed = c.getSuppressed();
      for (int i = suppressed.length - 1; i >= 0; i--) {
        todo.push(suppressed[i]);
      }
      if (c.getCause() != null) {
        todo.push(c.getCause());
      }
    }
    return out;
  }

  /**
   * The most specific text in the chain: the deepest message that is not just a wrapper's repetition
   * of its cause. Lettuce's "Unable to connect to host/&lt;unresolved&gt;:port" says less than the
   * socket's "Connection refused: /host:port" below it.
   */
  static String rootText(Throwable t) {
    String text = null;
    int depth = 0;
    for (Throwable c = t; c != null && depth++ < 50; c = c.getCause()) {
      String m = c.getMessage();
      // skip a wrapper's "Class: message" of its cause, and a deeper message the kept one already contains
      if (m != null && !m.isBlank() && (c.getCause() == null || !m.equals(String.valueOf(c.getCause())))
          && (text == null || !text.contains(m.trim()))) {
        text = m.trim();
      }
    }
    return shorten(text != null ? text : t.getClass().getSimpleName());
  }

  private static String chainText(Throwable t) {
    StringBuilder s = new StringBuilder();
    for (Throwable c : related(t)) {
      if (!(c instanceof SslHandshakeTimeoutException)) {
        s.append(c.getMessage()).append(" | ");
      }
    }
    return s.toString();
  }

  /** Keeps messages one line and bounded (Netty quotes the bytes it got as hex). */
  private static String shorten(String text) {
    String oneLine = String.valueOf(text).replaceAll("\\s+", " ").trim();
    return oneLine.length() > 300 ? oneLine.substring(0, 300) + "…" : oneLine;
  }
}
