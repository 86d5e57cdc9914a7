package io.locksmith.check;

import io.locksmith.testkit.RedisSentinelGroup;
import io.locksmith.testkit.RedisServer;
import io.locksmith.testkit.TcpProxy;
import io.locksmith.testkit.zookeeper.ZooKeeperEnsemble;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;

/**
 * Injects the run's fault, again and again (kill-master: once) until the run's duration is nearly
 * over, with a lease plus a second of recovery between injections. Every injection is recorded as a
 * {@code FAULT} invoke/ok pair, and every fault is healed in a {@code finally}, also when the run is
 * stopped in the middle. Waits are on a stop latch, so stopping is prompt.
 *
 * <p>Faults that need a holder in the middle of its critical section pick a <em>victim</em>: the next
 * client that reads its register, which is then given a longer think time (long enough for the fault
 * to play out while it still believes it holds the lock).
 */
final class Nemesis {
  private static final Duration VICTIM_WAIT = Duration.ofSeconds(5);
  /**
   * {@code late-reply}: a held reply trickles a byte this often, under every socket read timeout in play
   * (the clients' network timeout is their command timeout, 1 s; the pool's validation timeout 500 ms), so
   * that the reply arrives late rather than the connection being given up.
   */
  static final Duration LATE_REPLY_GAP = Duration.ofMillis(100);
  /**
   * {@code late-reply}: shorter chunks pass at once: the pool's validation pings (about a dozen bytes),
   * which could not be trickled over the whole hold. A grant's reply is longer on every database (on
   * MariaDB and H2 the grant is followed by a read of the row, whose reply is).
   */
  static final int LATE_REPLY_MIN_BYTES = 32;

  private final Run run;
  private final CheckSettings s;
  private final long lease;
  private final CountDownLatch stop = new CountDownLatch(1);
  private final Thread thread;
  private volatile Exception error;

  Nemesis(Run run) {
    this.run = run;
    this.s = run.settings;
    this.lease = s.lease().toMillis();
    this.thread = new Thread(this::loop, "check-nemesis");
    this.thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  void stopAndJoin(Duration timeout) throws InterruptedException {
    stop.countDown();
    run.history.wake(); // a first injection waiting for grants
    thread.join(timeout.toMillis());
  }

  Exception error() {
    return error;
  }

  /** How long the fault itself keeps a part of the system down, for the unavailability bound. */
  static long outageMillis(CheckSettings s) {
    long lease = s.lease().toMillis();
    return switch (s.fault()) {
      case NONE, PAUSE_HOLDER, KILL_HOLDER, RESET_LINK, EXPIRE_MINORITY, EXPIRE_MAJORITY, KILL_MINORITY -> 0;
      case KILL_LEADER -> 10_000; // election, and the clients of the killed member reconnect elsewhere
      case RESTART_ALL -> 20_000; // every member down, then an election and every client reconnecting
      case KILL_MASTER -> 10_000; // down-after 1 s + election (failover-timeout 3 s, retried once) + reconnect
      case RESTART_EMPTY -> 2_000;
      case PAUSE_SERVER -> lease + 1_000;
      case RESTART_SERVER -> 5_000; // a clean stop, a start, the pools' reconnection
      case BLACKHOLE_LINK -> 2 * lease + 500;
      case DELAY_LINK -> 2 * lease;
      // the cut, then the member's rejoining (an election round and a sync) and its clients' reconnection
      case PARTITION_FOLLOWER -> 2 * lease + 500 + 5_000;
      case LATE_REPLY -> lateReplyWindowMillis(); // the replies of one JVM come late; nothing is down
    };
  }

  /** {@code late-reply}: how long each reply is held. */
  static long lateReplyHoldMillis() {
    return (long) (Clients.JDBC_COMMAND_TIMEOUT.toMillis() * Fault.LATE_REPLY_HOLD);
  }

  /** {@code late-reply}: how long replies are held back. */
  static long lateReplyWindowMillis() {
    return (long) (Clients.JDBC_COMMAND_TIMEOUT.toMillis() * Fault.LATE_REPLY_WINDOW);
  }

  /** @return false if the run was stopped during the wait */
  private boolean pause(long millis) throws InterruptedException {
    return !stop.await(millis, TimeUnit.MILLISECONDS);
  }

  private long remaining() {
    return s.duration().toMillis() - run.millisSinceStart(System.nanoTime());
  }

  private void loop() {
    try {
      if (s.fault() == Fault.NONE || !awaitFirstInjection()) {
        return;
      }
      long cycle = cycleMillis(s.fault(), lease);
      int limit = s.stopAfterInjections();
      while (stop.getCount() > 0 && remaining() > cycle) { // CheckSettings guarantees one pass
        once();
        if (s.fault() == Fault.KILL_MASTER || (limit > 0 && run.history.heals() >= limit)
            || !pause(lease + 1_000)) {
          return;
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      error = e;
      run.note("fault injection failed: " + e);
    }
  }

  /**
   * Waits the {@linkplain #firstInjectionDelayMillis first-injection delay}; a run that stops early only
   * until every client has been granted a lock once, if that comes sooner (they are all contending).
   *
   * @return false if the run was stopped during the wait
   */
  private boolean awaitFirstInjection() throws InterruptedException {
    long delay = firstInjectionDelayMillis(s.duration().toMillis());
    if (!s.stopsEarly()) {
      return pause(delay);
    }
    run.history.await(() -> stop.getCount() == 0 || run.history.grantedClients() >= s.clients(),
        System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(delay));
    return stop.getCount() > 0;
  }

  /** How long after the start the first injection is attempted. */
  static long firstInjectionDelayMillis(long durationMillis) {
    return Math.min(2_000, durationMillis / 5);
  }

  /** Slack for the nemesis' own scheduling when deciding whether a run is long enough for one cycle. */
  static final long CYCLE_SLACK_MILLIS = 500;

  /**
   * The shortest duration in which the nemesis attempts at least one injection of {@code fault}: the
   * first-injection delay plus one {@linkplain #cycleMillis cycle} plus {@link #CYCLE_SLACK_MILLIS}.
   *
   * @return the minimum in milliseconds; 0 for {@code none}
   */
  static long minimumDurationMillis(Fault fault, long leaseMillis) {
    if (fault == Fault.NONE) {
      return 0;
    }
    long need = cycleMillis(fault, leaseMillis) + CYCLE_SLACK_MILLIS;
    long shortRun = (need * 5 + 3) / 4 + 1; // delay d/5: d - d/5 > need
    return shortRun < 10_000 ? shortRun : need + 2_000 + 1; // delay 2 s from 10 s on
  }

  /** Time one injection needs to play out, so the last one is not cut short by the end of the run. */
  static long cycleMillis(Fault fault, long lease) {
    return switch (fault) {
      case PAUSE_HOLDER, BLACKHOLE_LINK -> 3 * lease + 1_000;
      case LATE_REPLY -> lateReplyWindowMillis() + 2 * lateReplyHoldMillis() + 2_000;
      case KILL_MASTER -> 2_000;
      case KILL_LEADER, RESTART_ALL -> 2 * lease + 5_000;
      case PARTITION_FOLLOWER -> 3 * lease + 3_000;
      default -> 2 * lease + 1_000;
    };
  }

  private interface Action {
    void run() throws Exception;
  }

  private void fault(String what, Action action) throws Exception {
    fault(null, what, action);
  }

  /**
   * Records a fault window around {@code action}. With a victim, the invoke event carries the victim's
   * lock and {@link Checkers#victimTag(String)} so the verdict can tell the victim's holds apart.
   */
  private void fault(Register.Chosen victim, String what, Action action) throws Exception {
    String detail = victim == null ? what : what + Checkers.victimTag(victim.client());
    run.history.record("nemesis", Event.Op.FAULT, Event.Type.INVOKE, victim == null ? "" : victim.lock(), 0, 0, 0,
        detail);
    run.note("fault: " + what);
    try {
      action.run();
    } finally {
      run.history.record("nemesis", Event.Op.FAULT, Event.Type.OK, "", 0, 0, 0, what);
      run.note("healed: " + what);
    }
  }

  /** Waits for the next client accepted by {@code eligible} to read; null if none did in time. */
  private Register.Chosen victim(Predicate<String> eligible, long thinkMillis) throws Exception {
    return victim(eligible, thinkMillis, false);
  }

  /**
   * Waits for the next client accepted by {@code eligible} to read; null if none did in time. With
   * {@code holdReply} the victim's read does not return until the caller calls
   * {@link Register.Chosen#release()}, which it must do in a {@code finally}.
   */
  private Register.Chosen victim(Predicate<String> eligible, long thinkMillis, boolean holdReply) throws Exception {
    CompletableFuture<Register.Chosen> chosen = run.register.chooseVictim(eligible, thinkMillis, holdReply);
    long deadline = System.nanoTime() + VICTIM_WAIT.toNanos();
    while (stop.getCount() > 0 && System.nanoTime() < deadline) {
      try {
        return chosen.get(100, TimeUnit.MILLISECONDS);
      } catch (TimeoutException e) {
        // keep waiting
      }
    }
    run.register.cancelVictim();
    Register.Chosen late = chosen.getNow(null);
    if (late != null) {
      late.release(); // chosen just as we gave up: let its read return
    }
    if (stop.getCount() > 0) {
      run.note("no client read its register within " + VICTIM_WAIT.toSeconds() + " s; skipped one injection");
    }
    return null;
  }

  private Register.Chosen childVictim(long thinkMillis) throws Exception {
    return childVictim(thinkMillis, false);
  }

  private Register.Chosen childVictim(long thinkMillis, boolean holdReply) throws Exception {
    return victim(client -> {
      Child c = run.childOf(client);
      return c != null && !c.isKilled();
    }, thinkMillis, holdReply);
  }

  private void once() throws Exception {
    List<RedisServer> nodes = run.deployment.lockNodes();
    switch (s.fault()) {
      case NONE -> { }
      case PAUSE_HOLDER -> {
        // the victim's read reply is held until its JVM is stopped: it cannot write before the pause
        Register.Chosen v = childVictim(400, true);
        if (v == null) {
          return;
        }
        try {
          Child c = run.childOf(v.client());
          fault(v, "SIGSTOP client JVM " + c.index + " (pid " + c.pid() + ") while " + v.client() + " holds "
              + v.lock() + ", for " + (2 * lease + 500) + " ms", () -> {
                try {
                  c.pause();
                } finally {
                  v.release(); // the reply waits in the stopped JVM's pipe
                }
                try {
                  pause(2 * lease + 500);
                } finally {
                  c.resume();
                }
              });
        } finally {
          v.release();
        }
      }
      case KILL_HOLDER -> {
        Register.Chosen v = childVictim(400);
        if (v == null) {
          return;
        }
        Child c = run.childOf(v.client());
        fault(v, "kill -9 client JVM " + c.index + " (pid " + c.pid() + ") while " + v.client() + " holds "
            + v.lock() + "; a new JVM replaces it", () -> {
              c.kill();
              run.replace(c);
            });
      }
      case KILL_MASTER -> {
        RedisSentinelGroup group = run.deployment.sentinelGroup();
        fault("freeze replication, grant, kill -9 the master " + group.master().port() + ", await the failover",
            () -> {
              group.freezeReplication();
              try {
                pause(200); // grants from now on are only on the master
                Register.Chosen v = victim(c -> true, 12_000);
                if (v != null) {
                  run.note(v.client() + " holds " + v.lock() + ", granted after the freeze");
                }
                long killed = System.nanoTime();
                group.killMaster();
                RedisServer promoted = group.awaitFailover(Duration.ofSeconds(40));
                run.note("failover to " + promoted.port() + " after " + (System.nanoTime() - killed) / 1_000_000
                    + " ms");
              } finally {
                group.thawReplication(); // also when the failover failed or the run was stopped
              }
            });
      }
      case RESTART_EMPTY -> {
        List<RedisServer> targets = nodes.size() == 1 ? nodes : nodes.subList(0, nodes.size() / 2 + 1);
        Register.Chosen v = victim(c -> true, lease + 3_000);
        if (v == null) {
          return;
        }
        fault(v, "restart " + targets.size() + " node(s) empty, one after another, while " + v.client() + " holds "
            + v.lock(), () -> {
              for (RedisServer n : targets) {
                n.restart();
              }
            });
      }
      case PAUSE_SERVER -> {
        Deployment.Database db = run.deployment.database();
        if (db != null) {
          long stopped = lease + 1_000;
          Register.Chosen v = victim(c -> true, stopped + lease);
          if (v == null) {
            return;
          }
          fault(v, "SIGSTOP the database for " + stopped + " ms while " + v.client() + " holds " + v.lock(), () -> {
            db.pause();
            try {
              pause(stopped);
            } finally {
              db.resume();
            }
          });
          return;
        }
        RedisServer node = nodes.get(0);
        long sleep = lease + 1_000;
        Register.Chosen v = victim(c -> true, sleep + lease);
        if (v == null) {
          return;
        }
        fault(v, "DEBUG SLEEP " + sleep + " ms on node " + node.port() + " while " + v.client() + " holds " + v.lock(),
            () -> node.command(Duration.ofMillis(sleep + 5_000), "DEBUG", "SLEEP",
                String.format(Locale.ROOT, "%.3f", sleep / 1000.0)));
      }
      case RESTART_SERVER -> {
        Deployment.Database db = run.deployment.database();
        Register.Chosen v = victim(c -> true, lease + 3_000);
        if (v == null) {
          return;
        }
        fault(v, "restart the database (same port and data) while " + v.client() + " holds " + v.lock(),
            db::restart);
      }
      case BLACKHOLE_LINK, RESET_LINK, DELAY_LINK -> links();
      case LATE_REPLY -> lateReplies();
      case EXPIRE_MINORITY, EXPIRE_MAJORITY -> {
        int count = s.fault() == Fault.EXPIRE_MINORITY ? (nodes.size() - 1) / 2 : nodes.size() / 2 + 1;
        Register.Chosen v = victim(c -> true, lease + 1_500);
        if (v == null) {
          return;
        }
        fault(v, "expire " + v.lock() + " early on " + count + " of " + nodes.size() + " node(s) while " + v.client()
            + " holds it", () -> {
              for (RedisServer n : nodes.subList(0, count)) {
                n.command("PEXPIRE", Deployment.lockKey(v.lock()), "1");
              }
            });
      }
      case KILL_LEADER -> {
        ZooKeeperEnsemble ensemble = run.deployment.zooKeeperEnsemble();
        Register.Chosen v = victim(c -> true, lease + 1_000);
        if (v == null) {
          return;
        }
        fault(v, "kill the ZooKeeper leader while " + v.client() + " holds " + v.lock() + ", restart it after "
            + lease + " ms", () -> {
              int leader = ensemble.killLeader();
              try {
                pause(lease);
              } finally {
                ensemble.restart(leader);
                ensemble.awaitQuorum(ZooKeeperEnsemble.QUORUM_TIMEOUT);
              }
            });
      }
      case RESTART_ALL -> {
        ZooKeeperEnsemble ensemble = run.deployment.zooKeeperEnsemble();
        Register.Chosen v = victim(c -> true, lease + 1_000);
        if (v == null) {
          return;
        }
        fault(v, "kill every ZooKeeper member while " + v.client() + " holds " + v.lock() + ", restart them all",
            ensemble::restartAll);
      }
      case PARTITION_FOLLOWER -> partitionFollower();
      case KILL_MINORITY -> {
        List<RedisServer> targets = nodes.subList(nodes.size() - (nodes.size() - 1) / 2, nodes.size());
        fault("kill -9 " + targets.size() + " of " + nodes.size() + " nodes, restart them empty after "
            + (lease + 1_000) + " ms", () -> {
              targets.forEach(RedisServer::kill);
              try {
                pause(lease + 1_000);
              } finally {
                for (RedisServer n : targets) {
                  n.restart();
                }
              }
            });
      }
    }
  }

  /**
   * Cuts the member a holder's client JVM is connected to off from the leader, for two leases plus 0.5 s:
   * the member keeps answering the client's reads until it notices (syncLimit = 5 ticks) while the leader
   * expires the holder's session after the session timeout and grants the lock to a client of another
   * member. The victim is a holder on a follower; the links are healed, and the quorum awaited, in a
   * {@code finally}.
   */
  private void partitionFollower() throws Exception {
    ZooKeeperEnsemble ensemble = run.deployment.zooKeeperEnsemble();
    long hold = 2 * lease + 500;
    int leader = ensemble.leader();
    if (leader < 0) {
      run.note("no ZooKeeper leader; skipped one injection");
      return;
    }
    Register.Chosen v = victim(client -> {
      Child c = run.childOf(client);
      return c != null && !c.isKilled() && run.deployment.memberOf(c.index) >= 0
          && run.deployment.memberOf(c.index) != leader;
    }, hold + lease);
    if (v == null) {
      return;
    }
    Child c = run.childOf(v.client());
    int member = run.deployment.memberOf(c.index);
    fault(v, "cut ZooKeeper member " + member + " (client JVM " + c.index + "'s server) off from the leader (member "
        + leader + ") while " + v.client() + " holds " + v.lock() + ", for " + hold + " ms", () -> {
          try {
            ensemble.isolateFromLeader(member);
            pause(hold);
          } finally {
            ensemble.healQuorumLinks();
            ensemble.awaitQuorum(ZooKeeperEnsemble.QUORUM_TIMEOUT);
          }
        });
  }

  /**
   * Holds back the database replies of one client JVM (all its pooled connections) for longer than the
   * clients' command timeout, during a window: the grants of that JVM's acquisitions are applied by the
   * database, their callers time out and try again with the same owner, and the late replies arrive
   * after a later attempt may have been granted. Then the next of that JVM's clients to read thinks for
   * longer than a reply is held, so that the late replies arrive while it holds the lock: a give-back
   * that frees its hold lets another client in (an overlap).
   */
  private void lateReplies() throws Exception {
    List<Child> live = run.children.stream().filter(c -> !c.isKilled()).toList();
    if (live.isEmpty()) {
      return;
    }
    Child c = live.get(java.util.concurrent.ThreadLocalRandom.current().nextInt(live.size()));
    List<TcpProxy> links = run.deployment.links(c.index);
    long hold = lateReplyHoldMillis();
    long window = lateReplyWindowMillis();
    fault("hold back the database replies of client JVM " + c.index + " for " + hold + " ms each (a byte every "
        + LATE_REPLY_GAP.toMillis() + " ms), during " + window + " ms; then its clients that read next think "
        + (hold + 1_000) + " ms", () -> {
          links.forEach(p -> p.holdReplies(Duration.ofMillis(hold), LATE_REPLY_GAP, LATE_REPLY_MIN_BYTES));
          try {
            pause(window);
          } finally {
            links.forEach(TcpProxy::heal);
          }
          // each of the JVM's clients that reads next (one of them may hold by a late attempt's grant)
          boolean any = false;
          for (int i = 0; i < c.clients.size(); i++) {
            Register.Chosen v = victim(client -> run.childOf(client) == c, hold + 1_000);
            if (v == null) {
              break;
            }
            any = true;
            run.note(v.client() + " holds " + v.lock() + " after its JVM's replies were held");
          }
          if (any) {
            pause(hold + 1_000); // the late replies arrive inside the fault window
          }
        });
  }

  private void links() throws Exception {
    long hold = switch (s.fault()) {
      case BLACKHOLE_LINK -> 2 * lease + 500;
      case DELAY_LINK -> 2 * lease;
      default -> 0;
    };
    Register.Chosen v = childVictim(hold + lease);
    if (v == null) {
      return;
    }
    Child c = run.childOf(v.client());
    List<TcpProxy> links = run.deployment.links(c.index);
    String who = " of client JVM " + c.index + " while " + v.client() + " holds " + v.lock();
    switch (s.fault()) {
      case BLACKHOLE_LINK -> fault(v, "blackhole the links" + who + " for " + hold + " ms", () -> {
        links.forEach(TcpProxy::blackhole);
        try {
          pause(hold);
        } finally {
          links.forEach(TcpProxy::heal);
          links.forEach(TcpProxy::resetAll); // streams that lost bytes are corrupt: make the client reconnect
        }
      });
      case RESET_LINK -> fault(v, "reset the connections" + who, () -> links.forEach(TcpProxy::resetAll));
      default -> fault(v, "delay the links" + who + " by " + lease / 2 + " ms for " + hold + " ms", () -> {
        links.forEach(p -> p.delay(Duration.ofMillis(lease / 2)));
        try {
          pause(hold);
        } finally {
          links.forEach(TcpProxy::heal);
        }
      });
    }
  }
}
