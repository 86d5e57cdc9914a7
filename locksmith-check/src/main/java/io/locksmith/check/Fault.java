package io.locksmith.check;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The faults a run can inject, by their command-line names. Which backend supports which fault is
 * stated by {@link CheckBackend#supportedFaults()}. Immutable and thread-safe.
 */
public enum Fault {
  /** No fault: the baseline, where every checker must report zero. */
  NONE("none", "no fault"),
  /** SIGSTOP a child JVM whose client has just read under the lock, for two leases plus 0.5 s, then SIGCONT. */
  PAUSE_HOLDER("pause-holder", "SIGSTOP a holder's JVM past its lease, then SIGCONT"),
  /** kill -9 a child JVM whose client holds a lock; a fresh child replaces it. */
  KILL_HOLDER("kill-holder", "kill -9 a holder's JVM (a new one replaces it)"),
  /** Sentinel: freeze replication, let a client take a lock, kill -9 the master, await the failover. */
  KILL_MASTER("kill-master", "freeze replication, grant, kill -9 the master, await the failover"),
  /** Restart lock node(s) empty while a lock is held (Redlock: a majority, one after another, no delay). */
  RESTART_EMPTY("restart-empty", "restart the node (Redlock: a majority, one by one) without its data"),
  /**
   * {@code DEBUG SLEEP} the Redis node (Redlock: one node), or SIGSTOP the database, for a lease plus 1 s
   * while a lock is held.
   */
  PAUSE_SERVER("pause-server", "DEBUG SLEEP the node (Redlock: one node; a database: SIGSTOP) for a lease + 1 s"),
  /** Stop the database cleanly and start it again on the same port and data while a lock is held. */
  RESTART_SERVER("restart-server", "stop the database and start it again with its data while a lock is held"),
  /** Drop every byte between a holder's JVM and the servers for two leases plus 0.5 s (TCP proxy). */
  BLACKHOLE_LINK("blackhole-link", "blackhole a holder's links to the servers for 2 leases + 0.5 s"),
  /** Reset (TCP RST) every connection of a holder's JVM to Redis. */
  RESET_LINK("reset-link", "reset a holder's connections to Redis"),
  /** Delay every chunk on a holder's links by half a lease for two leases. */
  DELAY_LINK("delay-link", "delay a holder's links by lease/2 for 2 leases"),
  /**
   * JDBC: during one command timeout, hold back every reply the database sends to one client JVM for
   * {@link #LATE_REPLY_HOLD} command timeouts, trickled so that no socket read times out: grants applied
   * by the database reach their callers after the call timed out (a commit stalled on a synchronous
   * standby or on fsync does the same), and the acquisition's next attempt, with the same owner, is
   * answered in time before the late reply arrives. The JVM's clients that read next think long enough
   * for the late replies to arrive during their hold.
   */
  LATE_REPLY("late-reply", "hold back a JVM's database replies past the command timeout, then deliver them"),
  /** Expire a held lock's key on a minority of Redlock nodes, as a forward clock jump would. */
  EXPIRE_MINORITY("expire-minority", "expire a held key early on a minority of nodes (clock jump)"),
  /** Expire a held lock's key on a majority of nodes (all of them for a single node). */
  EXPIRE_MAJORITY("expire-majority", "expire a held key early on a majority of nodes (clock jump)"),
  /** Redlock: kill -9 two of five nodes, keep them down a lease plus 1 s, restart them empty. */
  KILL_MINORITY("kill-minority", "kill -9 2 of 5 Redlock nodes, restart them (empty) a lease + 1 s later"),
  /** ZooKeeper ensemble: kill the leader while a lock is held, restart it a lease later (data kept). */
  KILL_LEADER("kill-leader", "kill the ZooKeeper leader while a lock is held, restart it a lease later"),
  /** ZooKeeper ensemble: kill every member while a lock is held, restart them all (data kept). */
  RESTART_ALL("restart-all", "kill every ZooKeeper member while a lock is held, restart them all (data kept)"),
  /**
   * ZooKeeper ensemble: cut the member a holder's client is connected to off from the leader (its quorum
   * link black-holed) for two leases plus 0.5 s, while the client stays connected to that member.
   */
  PARTITION_FOLLOWER("partition-follower",
      "cut a holder's ZooKeeper member off from the leader for 2 leases + 0.5 s (the client stays connected to it)");

  /**
   * {@code late-reply}: each reply is held this many command timeouts: past the call's timeout, and past
   * the next attempt (sent a timeout plus a 13-25 ms backoff after the first, answered at once), but
   * before the attempt after that.
   */
  static final double LATE_REPLY_HOLD = 1.5;
  /** {@code late-reply}: replies are held during this many command timeouts. */
  static final double LATE_REPLY_WINDOW = 2.0;

  private final String cliName;
  private final String description;

  Fault(String cliName, String description) {
    this.cliName = cliName;
    this.description = description;
  }

  /** @return the command-line name, e.g. {@code pause-holder} */
  public String cliName() {
    return cliName;
  }

  /** @return one line saying what the fault does */
  public String description() {
    return description;
  }

  /** @return whether the fault acts on a client JVM (and so needs child processes) */
  public boolean targetsClientProcess() {
    return this == PAUSE_HOLDER || this == KILL_HOLDER;
  }

  /** @return whether the fault acts on the network between clients and the servers (a TCP proxy per JVM) */
  public boolean targetsLinks() {
    return this == BLACKHOLE_LINK || this == RESET_LINK || this == DELAY_LINK || this == LATE_REPLY;
  }

  /**
   * @param name a command-line name
   * @return the fault
   * @throws IllegalArgumentException if no fault has that name (the message lists them)
   */
  public static Fault parse(String name) {
    for (Fault f : values()) {
      if (f.cliName.equals(name.toLowerCase(Locale.ROOT))) {
        return f;
      }
    }
    throw new IllegalArgumentException("unknown fault '" + name + "'; faults: "
        + Arrays.stream(values()).map(Fault::cliName).collect(Collectors.joining(", ")));
  }
}
