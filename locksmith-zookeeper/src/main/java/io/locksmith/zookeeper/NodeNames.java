package io.locksmith.zookeeper;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;

/**
 * How lock names and owners become ZooKeeper node names. Stateless and thread-safe.
 *
 * <p><b>Lock names</b> are encoded into one path segment, so that every valid Locksmith name (slashes,
 * dots, spaces, any Unicode) is exactly one lock parent node and none can reach another path: ASCII
 * letters, digits and {@code - _ . : @ , + = ~} stay as they are, every other character becomes the
 * percent-escapes of its UTF-8 bytes ({@code /} is {@code %2F}, {@code %} is {@code %25}), and the names
 * {@code .} and {@code ..}, which ZooKeeper reserves, have their dots escaped. The encoding is one-to-one.
 * A name whose segment would exceed {@link #MAX_SEGMENT} characters is refused.
 *
 * <p><b>Lock nodes</b> are named {@code <tag>.<clientId>.<ownerKey>.<sequence>}: a tag for the node's
 * role (lock, read, write, permit), the creating client's id, a 72-bit digest of the owner id, and the
 * 10-digit sequence ZooKeeper appends. The client id and owner key make the name unique to one
 * acquisition before the server has answered, so a create whose reply was lost can be found again by
 * its prefix ("protected mode"), and a client can find every node it created.
 */
final class NodeNames {
  /**
   * Longest encoded lock name, 8192 characters: a name of the default 512 code points always fits (at
   * most 12 characters per code point), and every request naming a path stays far below ZooKeeper's
   * 1 MB packet limit.
   */
  static final int MAX_SEGMENT = 8192;
  private static final char[] HEX = "0123456789ABCDEF".toCharArray();
  private static final int SEQUENCE_DIGITS = 10;
  /**
   * The last sequence ZooKeeper can tell apart, 2^31 − 1. The suffix is the parent's count of creates,
   * a signed 32-bit number: once it has reached this value, the server names every further child of the
   * parent with it again (the count wraps negative, and the server keeps the larger value), so the order
   * of such nodes can no longer be read from their names. A node with this sequence is never granted
   * ({@link QueueOps}); nodes below it are unique and ordered.
   */
  static final long LAST_SEQUENCE = Integer.MAX_VALUE;

  private NodeNames() {}

  /**
   * @param name a lock name the core has validated
   * @return the path segment for it
   * @throws IllegalArgumentException if the segment would be longer than {@link #MAX_SEGMENT}
   */
  static String encode(String name) {
    if (name.equals(".") || name.equals("..")) {
      return name.replace(".", "%2E");
    }
    StringBuilder out = new StringBuilder(name.length() + 16);
    for (int i = 0; i < name.length(); ) {
      int cp = name.codePointAt(i);
      i += Character.charCount(cp);
      if (plain(cp)) {
        out.append((char) cp);
      } else {
        for (byte b : new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8)) {
          out.append('%').append(HEX[(b >> 4) & 0xF]).append(HEX[b & 0xF]);
        }
      }
      if (out.length() > MAX_SEGMENT) {
        throw tooLong(name);
      }
    }
    return out.toString();
  }

  private static IllegalArgumentException tooLong(String name) {
    return new IllegalArgumentException("lock name of " + name.codePointCount(0, name.length())
        + " code points is too long for a ZooKeeper node: encoded, it exceeds " + MAX_SEGMENT
        + " characters (non-ASCII characters take up to 12)");
  }

  private static boolean plain(int c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_'
        || c == '.' || c == ':' || c == '@' || c == ',' || c == '+' || c == '=' || c == '~';
  }

  /**
   * @param segment an encoded lock name
   * @return the lock name
   * @throws IllegalArgumentException if {@code segment} is not an encoding made by {@link #encode}
   */
  static String decode(String segment) {
    byte[] bytes = new byte[segment.length()];
    int n = 0;
    for (int i = 0; i < segment.length(); i++) {
      char c = segment.charAt(i);
      if (c == '%') {
        if (i + 2 >= segment.length()) {
          throw new IllegalArgumentException("not an encoded lock name: " + segment);
        }
        bytes[n++] = (byte) Integer.parseInt(segment.substring(i + 1, i + 3), 16);
        i += 2;
      } else if (c < 0x80) {
        bytes[n++] = (byte) c;
      } else {
        throw new IllegalArgumentException("not an encoded lock name: " + segment);
      }
    }
    return new String(bytes, 0, n, StandardCharsets.UTF_8);
  }

  /**
   * @param owner an owner id
   * @return 12 URL-safe base64 characters (72 bits of its SHA-256)
   */
  static String ownerKey(String owner) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(owner.getBytes(StandardCharsets.UTF_8));
      return Base64.getUrlEncoder().withoutPadding().encodeToString(java.util.Arrays.copyOf(digest, 9));
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError("every JDK has SHA-256", e);
    }
  }

  /**
   * @param tag the node's role
   * @param clientId the creating client's id
   * @param ownerKey {@link #ownerKey(String)} of the owner
   * @return the name to create, to which ZooKeeper appends the sequence
   */
  static String prefix(char tag, String clientId, String ownerKey) {
    return tag + "." + clientId + "." + ownerKey + ".";
  }

  /**
   * One lock node of a parent, parsed from its name.
   *
   * @param name the child name
   * @param tag the role tag
   * @param clientId the creating client's id
   * @param ownerKey the owner's key
   * @param sequence the sequence number ZooKeeper appended
   */
  record Node(String name, char tag, String clientId, String ownerKey, long sequence) {
    /** @return the name without the sequence: what the creator asked for */
    String prefix() {
      return name.substring(0, name.length() - SEQUENCE_DIGITS);
    }
  }

  /**
   * @param child a child name
   * @return the parsed node, or null if the name is not a lock node's
   */
  static Node parse(String child) {
    int length = child.length();
    if (length < SEQUENCE_DIGITS + 6 || child.charAt(1) != '.') {
      return null;
    }
    int second = child.indexOf('.', 2);
    int third = second < 0 ? -1 : child.indexOf('.', second + 1);
    if (third < 0 || third != length - SEQUENCE_DIGITS - 1) {
      return null;
    }
    long sequence = 0;
    for (int i = third + 1; i < length; i++) {
      char c = child.charAt(i);
      if (c < '0' || c > '9') {
        return null;
      }
      sequence = sequence * 10 + (c - '0');
    }
    return new Node(child, child.charAt(0), child.substring(2, second), child.substring(second + 1, third), sequence);
  }

  /**
   * @param children child names of a lock parent, in any order
   * @return its lock nodes in the order the rules read them ({@link Side#order}: arrival order, a
   *     read-write lock's downgrade nodes first); other children are left out
   */
  static List<Node> queue(List<String> children) {
    List<Node> nodes = new ArrayList<>(children.size());
    for (String child : children) {
      Node node = parse(child);
      if (node != null) {
        nodes.add(node);
      }
    }
    nodes.sort(Comparator.comparingLong(Node::sequence));
    return Side.order(nodes);
  }
}
