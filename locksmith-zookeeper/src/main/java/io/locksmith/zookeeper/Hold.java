package io.locksmith.zookeeper;

import java.util.concurrent.ScheduledFuture;
import org.apache.zookeeper.Watcher;

/**
 * This client's record of one owner's node on one lock: created, waiting or holding. Fields are guarded
 * by the record's monitor, except the final ones.
 */
final class Hold {
  /** Identifies a hold: the same owner may hold a write and a read node of one name (a downgrade). */
  record Key(Side side, String name, String owner) {}

  final Key key;
  final String parent;
  final String prefix;
  final String ownerKey;
  final Watcher watcher;

  /** Full path of the node, or null while none is known. */
  String path;
  /** The node's creation zxid, once {@link #path} is known. */
  long czxid;
  /** The session that owns the node (its ephemeral owner). */
  long session;
  boolean granted;
  int holds;
  /** A create went unanswered: the node may exist; look for it by prefix before creating another. */
  boolean uncertain;
  /** The lease behind it was declared lost (session, expiry or deletion): renewals answer no. */
  boolean lost;
  /** Forgotten: released, given up or closed; a late reply must clean up after itself. */
  boolean gone;
  /** The waiting acquisition to wake, or null. */
  String waiterId;
  /** Local deadline of the lease ({@link System#nanoTime()}), extended by renewals. */
  long expiresAt;
  ScheduledFuture<?> expiry;
  /** The lease time of the last grant or renewal, for inspection. */
  long leaseMillis;

  Hold(Key key, String parent, String prefix, String ownerKey, Watcher watcher) {
    this.key = key;
    this.parent = parent;
    this.prefix = prefix;
    this.ownerKey = ownerKey;
    this.watcher = watcher;
  }

  String name() {
    return key.name();
  }

  Side side() {
    return key.side();
  }

  @Override
  public String toString() {
    return "Hold[" + key.side() + " '" + key.name() + "' " + key.owner() + " " + path + "]";
  }
}
