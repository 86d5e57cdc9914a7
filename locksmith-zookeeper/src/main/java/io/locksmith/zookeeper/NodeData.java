package io.locksmith.zookeeper;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * What a lock node stores, one field per line: the owner id, the lease time in ms and the holder's
 * session timeout in ms; a held permit has a fourth line, {@code held}. Read by operators' {@code
 * inspect}; nothing a grant depends on. Immutable.
 *
 * @param owner the owner id
 * @param leaseMillis the lease time the holder asked for
 * @param sessionTimeoutMillis the holder's session timeout: how long the node outlives a dead holder
 */
record NodeData(String owner, long leaseMillis, long sessionTimeoutMillis) {

  byte[] encode(boolean held) {
    return (owner + "\n" + leaseMillis + "\n" + sessionTimeoutMillis + (held ? "\nheld" : ""))
        .getBytes(StandardCharsets.UTF_8);
  }

  /** @return the fields, or an unknown owner if the data is not a lock node's */
  static NodeData parse(byte[] data) {
    if (data == null) {
      return new NodeData("?", 0, 0);
    }
    String[] lines = new String(data, StandardCharsets.UTF_8).split("\n", -1);
    return new NodeData(lines[0].isEmpty() ? "?" : lines[0], number(lines, 1), number(lines, 2));
  }

  private static long number(String[] lines, int i) {
    try {
      return i < lines.length ? Long.parseLong(lines[i].trim()) : 0;
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  /**
   * How long the server keeps the node if its holder does nothing more, as far as the node tells: what is
   * left of the lease by the server's creation time ({@code ctime}), or the whole lease once that has
   * passed (the holder renewed it), never more than the holder's session timeout, which bounds how long
   * the node outlives a dead holder.
   *
   * @param ctime the node's creation time, server wall clock in ms
   * @param now this machine's wall clock in ms
   */
  Duration remaining(long ctime, long now) {
    long age = Math.max(0, now - ctime);
    long left = age < leaseMillis ? leaseMillis - age : leaseMillis;
    if (sessionTimeoutMillis > 0) {
      left = Math.min(left, sessionTimeoutMillis);
    }
    return Duration.ofMillis(Math.max(0, left));
  }
}
