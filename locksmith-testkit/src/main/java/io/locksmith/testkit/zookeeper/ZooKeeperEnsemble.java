package io.locksmith.testkit.zookeeper;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import io.locksmith.testkit.QuickRun;
import io.locksmith.testkit.TcpProxy;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;

/**
 * A real ZooKeeper ensemble (3 members by default) running inside the test JVM (curator-test's
 * {@code TestingCluster}), each member on free ports of {@code 127.0.0.1} with its data in a temporary
 * directory. {@link #start()} returns once a leader serves with a quorum of followers. Members are
 * numbered from 0 in the order of {@link #connectString()}; tests can kill and restart members, the
 * leader, or all of them (data survives a kill, so a full restart keeps every node and the zxid
 * sequence).
 *
 * <pre>{@code
 * try (ZooKeeperEnsemble zk = ZooKeeperEnsemble.start()) {
 *   LockClient locks = ZooKeeperLockClient.create(zk.uri());
 *   int leader = zk.killLeader();
 *   zk.awaitQuorum(Duration.ofSeconds(30));
 * }
 * }</pre>
 *
 * <p>An ensemble started with {@link #startPartitionable(int, Duration)} routes each member's quorum
 * connections to each other member through a {@link TcpProxy} of its own (every member is given its own
 * view of its peers' quorum addresses), so that one member can be cut off from the leader while its
 * client port and its election links stay up: {@link #isolateFromLeader(int)}, {@link #healQuorumLinks()}.
 *
 * <p>Thread-safety: queries may be called from any thread; kills and restarts must not race each other.
 */
public final class ZooKeeperEnsemble implements ZooKeeperTarget {
  /** How long {@link #start()} and restarts wait for a serving quorum. */
  public static final Duration QUORUM_TIMEOUT = Duration.ofSeconds(60);
  private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(2);

  private final TestingCluster cluster;
  private final List<InstanceSpec> members;
  private final boolean[] running;
  /** {@code quorumLinks[i][j]}: member i's link to member j's quorum port; null if not partitionable. */
  private final TcpProxy[][] quorumLinks;

  private ZooKeeperEnsemble(TestingCluster cluster, List<InstanceSpec> members, TcpProxy[][] quorumLinks) {
    this.cluster = cluster;
    this.quorumLinks = quorumLinks;
    this.members = Collections.unmodifiableList(members);
    this.running = new boolean[members.size()]; // guarded by itself
    java.util.Arrays.fill(running, true);
  }

  /**
   * Starts 3 members with a 1 s tick and waits for a quorum.
   *
   * @return the serving ensemble
   * @throws IllegalStateException if no quorum serves within {@link #QUORUM_TIMEOUT}
   */
  public static ZooKeeperEnsemble start() {
    return start(3, ZooKeeperTestServer.DEFAULT_TICK_TIME);
  }

  /**
   * @param size the number of members, 3 to 7
   * @param tickTime the members' tick, 10 ms to 10 s (sessions of 1 to 20 ticks are accepted)
   * @return the serving ensemble
   * @throws IllegalArgumentException if an argument is out of range
   * @throws IllegalStateException if no quorum serves within {@link #QUORUM_TIMEOUT}
   */
  public static ZooKeeperEnsemble start(int size, Duration tickTime) {
    QuickRun.checkServerAllowed("ZooKeeper");
    if (size < 3 || size > 7) {
      throw new IllegalArgumentException("an ensemble has 3 to 7 members here, was " + size);
    }
    List<InstanceSpec> specs = new ArrayList<>();
    for (int id = 1; id <= size; id++) {
      specs.add(Specs.spec(tickTime, id));
    }
    return started(new TestingCluster(specs), specs, null);
  }

  /**
   * As {@link #start(int, Duration)}, with every member's quorum connection to every other member
   * through a proxy, so that {@link #isolateFromLeader(int)} can cut one member off from the leader. (A
   * follower connects to the leader's quorum port; member i is told that member j's quorum port is the
   * port of the proxy {@code i → j}; election ports are not proxied.)
   *
   * @param size the number of members, 3 to 7
   * @param tickTime the members' tick, 10 ms to 10 s
   * @return the serving ensemble
   * @throws IllegalArgumentException if an argument is out of range
   * @throws IllegalStateException if no quorum serves within {@link #QUORUM_TIMEOUT}
   */
  public static ZooKeeperEnsemble startPartitionable(int size, Duration tickTime) {
    QuickRun.checkServerAllowed("ZooKeeper");
    if (size < 3 || size > 7) {
      throw new IllegalArgumentException("an ensemble has 3 to 7 members here, was " + size);
    }
    List<InstanceSpec> specs = new ArrayList<>();
    for (int id = 1; id <= size; id++) {
      specs.add(Specs.spec(tickTime, id));
    }
    TcpProxy[][] links = new TcpProxy[size][size];
    Map<InstanceSpec, java.util.Collection<InstanceSpec>> views = new LinkedHashMap<>();
    try {
      for (int i = 0; i < size; i++) {
        List<InstanceSpec> view = new ArrayList<>();
        for (int j = 0; j < size; j++) {
          if (i == j) {
            view.add(specs.get(i));
            continue;
          }
          InstanceSpec peer = specs.get(j);
          links[i][j] = TcpProxy.start(Specs.HOST, peer.getQuorumPort());
          // same member (id, client and election port: equal by client port), reached through the proxy
          view.add(new InstanceSpec(peer.getDataDirectory(), peer.getPort(), peer.getElectionPort(),
              links[i][j].port(), false, peer.getServerId(), peer.getTickTime(), peer.getMaxClientCnxns(),
              peer.getCustomProperties(), peer.getHostname()));
        }
        views.put(specs.get(i), view);
      }
    } catch (RuntimeException e) {
      closeLinks(links);
      throw e;
    }
    return started(new TestingCluster(views), specs, links);
  }

  private static ZooKeeperEnsemble started(TestingCluster cluster, List<InstanceSpec> specs, TcpProxy[][] links) {
    ZooKeeperEnsemble ensemble = new ZooKeeperEnsemble(cluster, specs, links);
    try {
      cluster.start();
      ensemble.awaitQuorum(QUORUM_TIMEOUT);
      ensemble.deleteConfigurationFiles();
      return ensemble;
    } catch (Exception | Error e) {
      ensemble.close();
      if (e instanceof IllegalStateException ise) {
        throw ise;
      }
      throw new IllegalStateException("ZooKeeper ensemble did not start: " + e, e);
    }
  }

  @Override
  public String connectString() {
    StringBuilder s = new StringBuilder();
    for (InstanceSpec member : members) {
      s.append(s.length() == 0 ? "" : ",").append(member.getHostname()).append(':').append(member.getPort());
    }
    return s.toString();
  }

  /** @return the number of members */
  public int size() {
    return members.size();
  }

  /**
   * @param member a member index
   * @return its client port
   */
  public int port(int member) {
    return members.get(member).getPort();
  }

  /** @return {@code 127.0.0.1} */
  public String host() {
    return Specs.HOST;
  }

  /**
   * @param member a member index
   * @return its role as it reports it ({@code leader}, {@code follower}), or an empty string if it is
   *     down or not serving
   */
  public String mode(int member) {
    if (!isRunning(member)) {
      return "";
    }
    try {
      return FourLetterWords.mode(Specs.HOST, port(member), PROBE_TIMEOUT);
    } catch (UncheckedIOException down) {
      return "";
    }
  }

  /** @return the leader's index, or -1 if no member says it leads */
  public int leader() {
    for (int i = 0; i < members.size(); i++) {
      if ("leader".equals(mode(i))) {
        return i;
      }
    }
    return -1;
  }

  /**
   * Waits until a leader serves with enough followers for a quorum.
   *
   * @param timeout how long to wait
   * @return the leader's index
   * @throws IllegalStateException if there is none within {@code timeout}
   */
  public int awaitQuorum(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    String last = "";
    while (true) {
      int leader = -1;
      int serving = 0;
      StringBuilder modes = new StringBuilder();
      for (int i = 0; i < members.size(); i++) {
        String mode = mode(i);
        modes.append(i).append('=').append(mode.isEmpty() ? "-" : mode).append(' ');
        if (mode.equals("leader")) {
          leader = i;
          serving++;
        } else if (mode.equals("follower")) {
          serving++;
        }
      }
      last = modes.toString().trim();
      if (leader >= 0 && serving > members.size() / 2) {
        return leader;
      }
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException("no ZooKeeper quorum within " + timeout + " (" + last + ")");
      }
      if (Thread.currentThread().isInterrupted()) {
        throw new IllegalStateException("interrupted while waiting for a ZooKeeper quorum");
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
    }
  }

  /**
   * Kills a member abruptly (its connections drop; its data stays for {@link #restart(int)}).
   *
   * @param member a member index
   * @throws IllegalStateException if the member is already down or the kill fails
   */
  public void kill(int member) {
    if (!isRunning(member)) {
      throw new IllegalStateException("member " + member + " is already down");
    }
    try {
      cluster.killServer(members.get(member));
      synchronized (running) {
        running[member] = false;
      }
    } catch (Exception e) {
      throw new IllegalStateException("killing member " + member + " failed: " + e, e);
    }
  }

  /**
   * Starts a killed member again with its data.
   *
   * @param member a member index
   * @throws IllegalStateException if it is running or does not restart
   */
  public void restart(int member) {
    if (isRunning(member)) {
      throw new IllegalStateException("member " + member + " is running");
    }
    try {
      cluster.restartServer(members.get(member));
      synchronized (running) {
        running[member] = true;
      }
      deleteConfigurationFiles();
    } catch (Exception e) {
      throw new IllegalStateException("restarting member " + member + " failed: " + e, e);
    }
  }

  /**
   * @param member a member index
   * @return whether it was not killed (or was restarted since)
   */
  public boolean isRunning(int member) {
    synchronized (running) {
      return running[member];
    }
  }

  /**
   * Kills the current leader.
   *
   * @return the killed leader's index
   * @throws IllegalStateException if there is no leader
   */
  public int killLeader() {
    int leader = leader();
    if (leader < 0) {
      throw new IllegalStateException("no member leads");
    }
    kill(leader);
    return leader;
  }

  /**
   * Kills every member, restarts them all and waits for a quorum: an outage of the whole ensemble
   * that keeps the data.
   *
   * @return the new leader's index
   * @throws IllegalStateException if no quorum serves within {@link #QUORUM_TIMEOUT} afterwards
   */
  public int restartAll() {
    for (int i = 0; i < members.size(); i++) {
      if (isRunning(i)) {
        kill(i);
      }
    }
    for (int i = 0; i < members.size(); i++) {
      restart(i);
    }
    return awaitQuorum(QUORUM_TIMEOUT);
  }

  private void deleteConfigurationFiles() {
    Specs.deleteConfigurationFiles(members.stream().map(InstanceSpec::getPort).toList());
  }

  /**
   * Cuts member {@code member}'s quorum link to the current leader (every byte dropped both ways, the
   * connection left open), so that it keeps serving its clients, reads included, until it notices the
   * silence ({@code syncLimit} = 5 ticks), while the leader and the other followers go on without it.
   * Its client port and its election links stay up; when it looks for a leader again it finds the same
   * one, which it cannot reach, until {@link #healQuorumLinks()}.
   *
   * @param member a member index, not the leader
   * @return the leader's index
   * @throws IllegalStateException if the ensemble was not started with {@link #startPartitionable}, there
   *     is no leader, or {@code member} leads
   */
  public int isolateFromLeader(int member) {
    if (quorumLinks == null) {
      throw new IllegalStateException("isolateFromLeader needs an ensemble from startPartitionable");
    }
    int leader = leader();
    if (leader < 0) {
      throw new IllegalStateException("no member leads");
    }
    if (leader == member) {
      throw new IllegalStateException("member " + member + " is the leader");
    }
    quorumLinks[member][leader].blackhole();
    return leader;
  }

  /**
   * Heals every quorum link and resets its connections (bytes were dropped: those streams are corrupt),
   * so that an isolated member connects to the leader again and catches up.
   *
   * @throws IllegalStateException if the ensemble was not started with {@link #startPartitionable}
   */
  public void healQuorumLinks() {
    if (quorumLinks == null) {
      throw new IllegalStateException("healQuorumLinks needs an ensemble from startPartitionable");
    }
    for (TcpProxy[] row : quorumLinks) {
      for (TcpProxy link : row) {
        if (link != null && link.isBlackholed()) {
          link.heal();
          link.resetAll();
        }
      }
    }
  }

  /** @return whether members can be cut off from the leader ({@link #startPartitionable}) */
  public boolean isPartitionable() {
    return quorumLinks != null;
  }

  private static void closeLinks(TcpProxy[][] links) {
    if (links == null) {
      return;
    }
    for (TcpProxy[] row : links) {
      for (TcpProxy link : row) {
        if (link != null) {
          link.close();
        }
      }
    }
  }

  @Override
  public void close() {
    try {
      cluster.close();
    } catch (IOException | RuntimeException e) {
      // best effort: the data directories are temporary
    }
    closeLinks(quorumLinks);
    synchronized (running) {
      java.util.Arrays.fill(running, false);
    }
  }

  @Override
  public String toString() {
    return "ZooKeeperEnsemble[" + connectString() + "]";
  }
}
