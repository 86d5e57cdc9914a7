package io.locksmith.zookeeper;

import java.util.List;

/**
 * One lock kind, or one side of the read-write lock, as nodes under a lock parent: where its parents
 * live, how its nodes are tagged, and the rule that says whether a node holds. Immutable.
 *
 * <p>Every rule grants in sequence (arrival) order and every waiter watches one node, so a release
 * wakes one waiter:
 * <ul>
 *   <li>exclusive, fair and write: the first node holds; a waiter watches its predecessor;
 *   <li>read-write, phase-fair: a read node holds if no write node is ahead of it, or if it is
 *       <em>entitled</em>: it was waiting when the last write phase ended. A writer that ends its phase
 *       (release, lease run out, operator) records the boundary, the highest sequence any node could have
 *       had at that moment, together with its token, on the lock parent; read nodes up to the boundary are
 *       entitled. A write node holds if it is first and no entitled read node is left, so the readers that
 *       waited through a write phase enter as one batch before the writer that waited with them, and a
 *       reader that arrives while a writer waits queues behind it. A waiting reader watches the first write
 *       node ahead of it (the holder, whose end wakes the whole batch); a first writer that waits for
 *       entitled readers watches one of them at a time. A <em>downgrade</em> node (tag {@code d}), which the holder of the write lock creates for
 *       its read hold, counts as ahead of every other node of the lock: it takes the place of the write
 *       node it is created under, so that no waiting writer comes in when that write node goes. It is
 *       granted only if its owner's write node is then the first of the others (the write lock is
 *       still held), else refused;
 *   <li>permit: the first {@code permits} nodes hold; a waiter watches its predecessor, and the first
 *       waiter (its predecessor holds) also the list of nodes and the permit count.
 * </ul>
 */
enum Side {
  EXCLUSIVE("lock", 'x'),
  FAIR("fair", 'x'),
  READ("rw", 'r'),
  WRITE("rw", 'w'),
  PERMIT("semaphore", 'p');

  /** The directory of this kind's lock parents under the namespace. */
  final String dir;
  /** The tag of this side's nodes. */
  final char tag;
  /** The tag of a downgrade's read node. */
  static final char DOWNGRADE = 'd';

  Side(String dir, char tag) {
    this.dir = dir;
    this.tag = tag;
  }

  /** @return the kind of hold this side's leases are, for the core's eviction notices */
  io.locksmith.spi.HoldKind holdKind() {
    switch (this) {
      case FAIR:
        return io.locksmith.spi.HoldKind.FAIR;
      case READ:
        return io.locksmith.spi.HoldKind.READ;
      case WRITE:
        return io.locksmith.spi.HoldKind.WRITE;
      case PERMIT:
        return io.locksmith.spi.HoldKind.PERMIT;
      default:
        return io.locksmith.spi.HoldKind.EXCLUSIVE;
    }
  }

  /**
   * What a node at {@code index} of {@code queue} may do.
   *
   * @param queue the lock parent's nodes in sequence order
   * @param index the node's position
   * @param permits the permit count in force (permits only)
   * @param boundary the last write phase's boundary (read-write only): read nodes up to this sequence
   *     are entitled
   * @return the decision
   */
  Decision decide(List<NodeNames.Node> queue, int index, int permits, long boundary) {
    NodeNames.Node self = queue.get(index);
    switch (this) {
      case EXCLUSIVE:
      case FAIR:
        return index == 0 ? Decision.GRANT : Decision.watch(queue.get(index - 1));
      case WRITE: {
        if (index > 0) {
          return Decision.watch(queue.get(index - 1));
        }
        NodeNames.Node entitled = firstEntitled(queue, boundary);
        return entitled == null ? Decision.GRANT : Decision.watch(entitled);
      }
      case READ:
        if (self.tag() == DOWNGRADE) {
          for (NodeNames.Node n : queue) {
            if (n.tag() != DOWNGRADE) {
              return n.tag() == WRITE.tag && n.ownerKey().equals(self.ownerKey()) ? Decision.GRANT : Decision.REFUSE;
            }
          }
          return Decision.REFUSE; // the write node is gone
        }
        if (entitled(self, boundary)) {
          return Decision.GRANT; // no writer can hold while an entitled reader is queued
        }
        for (int i = 0; i < index; i++) {
          NodeNames.Node ahead = queue.get(i);
          if (ahead.tag() == WRITE.tag) {
            return Decision.watch(ahead);
          }
        }
        return Decision.GRANT;
      case PERMIT:
        return index < permits ? Decision.GRANT : Decision.watch(queue.get(index - 1));
      default:
        throw new AssertionError(this);
    }
  }

  /**
   * @param queue the lock parent's nodes in sequence order
   * @param index a node's position
   * @param boundary the last write phase's boundary (read-write only)
   * @param marked whether the node has been marked as holding (permits only)
   * @return whether the node at {@code index} holds this side, for inspection and force-unlock
   */
  boolean holds(List<NodeNames.Node> queue, int index, long boundary, boolean marked) {
    NodeNames.Node node = queue.get(index);
    switch (this) {
      case EXCLUSIVE:
      case FAIR:
        return index == 0;
      case WRITE:
        return node.tag() == WRITE.tag && decide(queue, index, 0, boundary).granted();
      case READ:
        return (node.tag() == READ.tag || node.tag() == DOWNGRADE) && decide(queue, index, 0, boundary).granted();
      case PERMIT:
        return marked;
      default:
        throw new AssertionError(this);
    }
  }

  private static boolean entitled(NodeNames.Node node, long boundary) {
    return node.tag() == READ.tag && node.sequence() <= boundary;
  }

  private static NodeNames.Node firstEntitled(List<NodeNames.Node> queue, long boundary) {
    for (NodeNames.Node n : queue) {
      if (entitled(n, boundary)) {
        return n;
      }
    }
    return null;
  }

  /**
   * The nodes of a lock parent in the order the rules read them: sequence order, except that a
   * read-write lock's downgrade nodes come first.
   *
   * @param queue the nodes in sequence order
   * @return the nodes in rule order
   */
  static List<NodeNames.Node> order(List<NodeNames.Node> queue) {
    boolean any = false;
    for (NodeNames.Node n : queue) {
      any |= n.tag() == DOWNGRADE;
    }
    if (!any) {
      return queue;
    }
    List<NodeNames.Node> ordered = new java.util.ArrayList<>(queue.size());
    for (NodeNames.Node n : queue) {
      if (n.tag() == DOWNGRADE) {
        ordered.add(n);
      }
    }
    for (NodeNames.Node n : queue) {
      if (n.tag() != DOWNGRADE) {
        ordered.add(n);
      }
    }
    return ordered;
  }

  /**
   * A node's decision.
   *
   * @param granted whether it holds
   * @param watch the node to watch while it waits, or null when granted or refused outright
   */
  record Decision(boolean granted, NodeNames.Node watch) {
    static final Decision GRANT = new Decision(true, null);
    /** Not granted, and waiting would not help (a downgrade whose write lock is gone). */
    static final Decision REFUSE = new Decision(false, null);

    static Decision watch(NodeNames.Node node) {
      return new Decision(false, node);
    }
  }
}
