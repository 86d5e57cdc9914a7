package io.locksmith.redis;

import io.lettuce.core.RedisURI;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Checks the shape of a Redis URI before Lettuce parses it. Lettuce is lenient: it reads {@code
 * redis://localhost:notaport} as the host {@code "localhost:notaport"}, {@code redis://:6421} as the host
 * {@code ":6421"}, and a password with an unencoded {@code '@'} as part of the host, so each of these
 * mistakes used to surface only at connect time, as an unknown host. Here they are rejected at once,
 * with a message that names the part at fault and never contains the user or password.
 */
final class RedisUris {
  private RedisUris() {}

  /** A host name or IPv4 address, or a bracketed IPv6 address; then an optional {@code :port}. */
  private static final Pattern HOST_PORT =
      Pattern.compile("(\\[[0-9A-Fa-f:.]+(?:%[A-Za-z0-9._~-]+)?]|[A-Za-z0-9._-]+)(?::([^:]*))?");
  private static final Pattern PERCENT = Pattern.compile("%(?![0-9A-Fa-f]{2})");

  /**
   * The parts of {@code scheme://[credentials@]host[:port][,host[:port]…][/path][?query]}.
   *
   * @param credentials the raw user info before the last {@code '@'}, or null
   * @param hosts each {@code host[:port]} as written (trimmed)
   * @param path the path after the hosts, with its leading {@code '/'}, or {@code ""}
   * @param query the query after {@code '?'}, or null
   * @param redacted the URI with the credentials replaced by {@code ***}: safe for messages
   */
  record Parts(String scheme, String credentials, List<String> hosts, String path, String query,
      String redacted) {
    boolean hasQueryParameter(String name) {
      if (query == null) {
        return false;
      }
      for (String p : query.split("&")) {
        if (p.toLowerCase(Locale.ROOT).startsWith(name.toLowerCase(Locale.ROOT) + "=")) {
          return true;
        }
      }
      return false;
    }

    /** {@code text} with the credentials masked, for messages that quote a parser's complaint. */
    String mask(String text) {
      String t = String.valueOf(text);
      return credentials == null || credentials.isEmpty() ? t : t.replace(credentials, "***");
    }
  }

  /**
   * Splits and checks a URI whose scheme the caller has accepted.
   *
   * @param multipleHosts whether the URI may list several hosts (Sentinel, Cluster)
   * @throws IllegalArgumentException naming the part at fault: an unencoded {@code @ / ? #} or a bad
   *     percent-escape in the user or password, a missing or malformed host, a port that is not a number
   *     in 1..65535, several hosts where one is expected, a database that is not a number, a fragment
   */
  static Parts split(String uri, boolean multipleHosts) {
    int schemeEnd = uri.indexOf("://");
    String scheme = uri.substring(0, schemeEnd);
    String rest = uri.substring(schemeEnd + 3);
    // the last '@' ends the user info: a password with an unencoded '@' then shows as an '@' before it
    int at = rest.lastIndexOf('@');
    String credentials = at >= 0 ? rest.substring(0, at) : null;
    String after = at >= 0 ? rest.substring(at + 1) : rest;
    String redacted = scheme + "://" + (credentials != null ? "***@" : "") + after;
    if (credentials != null) {
      if (credentials.indexOf('@') >= 0) {
        throw new IllegalArgumentException("the user or password in '" + redacted + "' contains an unencoded '@';"
            + " write it as %40");
      }
      if (credentials.indexOf('/') >= 0 || credentials.indexOf('?') >= 0 || credentials.indexOf('#') >= 0) {
        throw new IllegalArgumentException("the user or password in '" + redacted + "' contains an unencoded"
            + " '/', '?' or '#'; write them as %2F, %3F and %23");
      }
      if (PERCENT.matcher(credentials).find()) {
        throw new IllegalArgumentException("the user or password in '" + redacted + "' contains a '%' that is"
            + " not followed by two hex digits; write a literal '%' as %25");
      }
    }
    if (after.indexOf('#') >= 0) {
      throw new IllegalArgumentException("a Redis URI has no fragment ('#'): '" + redacted + "'");
    }
    int q = after.indexOf('?');
    String query = q >= 0 ? after.substring(q + 1) : null;
    String hostsAndPath = q >= 0 ? after.substring(0, q) : after;
    int slash = hostsAndPath.indexOf('/');
    String path = slash >= 0 ? hostsAndPath.substring(slash) : "";
    String hostList = slash >= 0 ? hostsAndPath.substring(0, slash) : hostsAndPath;
    if (!path.isEmpty() && !path.equals("/") && !path.matches("/[0-9]{1,9}")) {
      throw new IllegalArgumentException("the database '" + path.substring(1) + "' in '" + redacted
          + "' is not a number");
    }
    List<String> hosts = new ArrayList<>();
    String[] entries = hostList.split(",", -1);
    if (entries.length > 1 && !multipleHosts) {
      throw new IllegalArgumentException("'" + redacted + "' lists " + entries.length + " hosts; " + scheme
          + ":// takes one (several hosts are for redis-sentinel:// or redis-cluster://)");
    }
    for (String entry : entries) {
      String hostPort = entry.trim();
      checkHostPort(hostPort, redacted);
      hosts.add(hostPort);
    }
    return new Parts(scheme, credentials, List.copyOf(hosts), path, query, redacted);
  }

  private static void checkHostPort(String hostPort, String redacted) {
    if (hostPort.isEmpty()) {
      throw new IllegalArgumentException("no host in '" + redacted + "'");
    }
    if (hostPort.startsWith(":")) {
      throw new IllegalArgumentException("no host before the port in '" + hostPort + "' of '" + redacted + "'");
    }
    Matcher m = HOST_PORT.matcher(hostPort);
    if (!m.matches()) {
      throw new IllegalArgumentException("'" + hostPort + "' in '" + redacted + "' is not host[:port] (a host"
          + " name, an IPv4 address or a bracketed IPv6 address, then an optional port)");
    }
    String port = m.group(2);
    if (port == null) {
      return;
    }
    if (!port.matches("[0-9]{1,5}")) {
      throw new IllegalArgumentException("the port '" + port + "' of '" + hostPort + "' in '" + redacted
          + "' is not a number");
    }
    int p = Integer.parseInt(port);
    if (p < 1 || p > 65535) {
      throw new IllegalArgumentException("the port " + p + " of '" + hostPort + "' in '" + redacted
          + "' is not in 1..65535");
    }
  }

  /**
   * Lettuce's parse of a URI that passed {@link #split}.
   *
   * @throws IllegalArgumentException if Lettuce rejects it; the message is Lettuce's with the credentials
   *     masked, and Lettuce's exception is kept as the cause only when there are no credentials it could
   *     quote
   */
  static RedisURI lettuce(String uri, Parts parts) {
    try {
      return RedisURI.create(uri);
    } catch (RuntimeException e) {
      boolean quiet = parts.credentials() != null && !parts.credentials().isEmpty();
      throw new IllegalArgumentException("not a valid Redis URI '" + parts.redacted() + "': "
          + parts.mask(e.getMessage()), quiet ? null : e);
    }
  }

  /** The URI with any user and password masked, for URIs that did not even pass {@link #split}. */
  static String redact(String uri) {
    int schemeEnd = uri.indexOf("://");
    int at = uri.lastIndexOf('@');
    return schemeEnd >= 0 && at > schemeEnd ? uri.substring(0, schemeEnd + 3) + "***" + uri.substring(at)
        : uri.replaceAll("//.*@", "//***@");
  }
}
