package io.locksmith.zookeeper;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.zookeeper.common.PathUtils;

/**
 * Parses {@code zookeeper://[user:password@]host[:port][,host[:port]…][/chroot]}. Messages never contain
 * the password. Stateless and thread-safe.
 */
final class ZooKeeperUris {
  static final String SCHEME = "zookeeper://";
  static final int DEFAULT_PORT = 2181;
  /** A host name or IPv4 address, or a bracketed IPv6 address; then an optional {@code :port}. */
  private static final Pattern HOST_PORT = Pattern.compile("(\\[[0-9A-Fa-f:.]+]|[A-Za-z0-9._-]+)(?::([^:]*))?");

  private ZooKeeperUris() {}

  /**
   * A parsed URI.
   *
   * @param hosts {@code host:port} per server
   * @param chroot the path all nodes live under, {@code ""} for the root
   * @param user the digest user, or null
   * @param password the digest password, or null
   */
  record Parsed(List<String> hosts, String chroot, String user, String password) {
    /** @return the connect string, {@code host:port,host:port} */
    String connectString() {
      return String.join(",", hosts);
    }

    /** @return the URI without credentials */
    String description() {
      return SCHEME + connectString() + chroot;
    }
  }

  /**
   * @param uri the URI
   * @return its parts
   * @throws IllegalArgumentException naming the part at fault
   */
  static Parsed parse(String uri) {
    if (!uri.startsWith(SCHEME)) {
      throw new IllegalArgumentException("a ZooKeeper URI starts with " + SCHEME + ", was '" + redact(uri) + "'");
    }
    String rest = uri.substring(SCHEME.length());
    if (rest.indexOf('?') >= 0 || rest.indexOf('#') >= 0) {
      throw new IllegalArgumentException("a ZooKeeper URI takes no query or fragment: '" + redact(uri) + "'");
    }
    // credentials cannot contain an unencoded '/', so the first '/' ends the authority
    int slash = rest.indexOf('/');
    String authority = slash < 0 ? rest : rest.substring(0, slash);
    String chroot = slash < 0 ? "" : rest.substring(slash);
    int at = authority.lastIndexOf('@');
    String user = null;
    String password = null;
    if (at >= 0) {
      String credentials = authority.substring(0, at);
      authority = authority.substring(at + 1);
      int colon = credentials.indexOf(':');
      if (colon <= 0) {
        throw new IllegalArgumentException("credentials in a ZooKeeper URI are user:password (digest), in '"
            + redact(uri) + "'");
      }
      user = decode(credentials.substring(0, colon), "user", uri);
      password = decode(credentials.substring(colon + 1), "password", uri);
    }
    if (chroot.equals("/")) {
      chroot = "";
    }
    if (!chroot.isEmpty()) {
      try {
        PathUtils.validatePath(chroot);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("the chroot '" + chroot + "' of '" + redact(uri) + "' is not a valid"
            + " ZooKeeper path: " + e.getMessage(), e);
      }
    }
    List<String> hosts = new ArrayList<>();
    for (String hostPort : authority.split(",", -1)) {
      Matcher m = HOST_PORT.matcher(hostPort.trim());
      if (hostPort.isBlank() || !m.matches()) {
        throw new IllegalArgumentException("'" + hostPort + "' in '" + redact(uri) + "' is not host[:port]");
      }
      int port = DEFAULT_PORT;
      if (m.group(2) != null) {
        try {
          port = Integer.parseInt(m.group(2));
        } catch (NumberFormatException e) {
          port = -1;
        }
        if (port < 1 || port > 65535) {
          throw new IllegalArgumentException("port '" + m.group(2) + "' in '" + redact(uri) + "' is not 1-65535");
        }
      }
      hosts.add(m.group(1) + ":" + port);
    }
    return new Parsed(List.copyOf(hosts), chroot, user, password);
  }

  /** @return {@code uri} with the credentials replaced by {@code ***} */
  static String redact(String uri) {
    int scheme = uri.indexOf("://");
    int start = scheme < 0 ? 0 : scheme + 3;
    int slash = uri.indexOf('/', start);
    int end = slash < 0 ? uri.length() : slash;
    int at = uri.lastIndexOf('@', end - 1);
    return at < start ? uri : uri.substring(0, start) + "***" + uri.substring(at);
  }

  private static String decode(String s, String what, String uri) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '%') {
        if (i + 2 >= s.length()) {
          throw new IllegalArgumentException("bad percent-escape in the " + what + " of '" + redact(uri) + "'");
        }
        try {
          out.write(Integer.parseInt(s.substring(i + 1, i + 3), 16));
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException("bad percent-escape in the " + what + " of '" + redact(uri) + "'");
        }
        i += 2;
      } else if (c == '/' || c == '?' || c == '#') {
        throw new IllegalArgumentException("'" + c + "' in the " + what + " of '" + redact(uri)
            + "' must be percent-encoded");
      } else {
        byte[] b = String.valueOf(c).getBytes(StandardCharsets.UTF_8);
        out.write(b, 0, b.length);
      }
    }
    String decoded = out.toString(StandardCharsets.UTF_8);
    if (decoded.isEmpty()) {
      throw new IllegalArgumentException("empty " + what + " in '" + redact(uri) + "'");
    }
    return decoded;
  }
}
