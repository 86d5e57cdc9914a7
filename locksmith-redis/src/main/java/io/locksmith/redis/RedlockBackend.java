package io.locksmith.redis;

import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.locksmith.BackendUnavailableException;
import io.locksmith.Capabilities;
import io.locksmith.FencingGuarantee;
import io.locksmith.LockException;
import io.locksmith.LockInfo;
import io.locksmith.LockKind;
import io.locksmith.spi.AcquireMode;
import io.locksmith.spi.AcquireReply;
import io.locksmith.spi.BackendContext;
import io.locksmith.spi.BackendEvents;
import io.locksmith.spi.HoldKind;
import io.locksmith.spi.LockBackend;
import io.locksmith.spi.RenewRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Redlock over N independent Redis masters, each a {@link RedisBackend} running the same scripts as a
 * single node. Every operation goes to all nodes at once; a result needs a majority.
 *
 * <p><b>Acquire</b> decides as soon as the outcome is known: granted by a majority, or a majority can
 * no longer be reached. A failed attempt releases on every node (the release follows the acquire on
 * each node's connection, so it also clears a node that grants late). Validity (lease − elapsed −
 * drift, elapsed from before the first send) is checked by the core when the reply arrives.
 *
 * <p><b>Fencing token.</b> Each node keeps a counter per lock name and grants with {@code counter + 1}
 * (seeded by its clock when it has none). The token is the highest value among the granting majority;
 * before the grant is reported, the nodes of that majority that returned less are raised to it, so
 * every reported token is held by a majority of counters. Any later grant needs a majority too, which
 * shares a node with it, and that node grants above it. Hence tokens strictly increase while no shared
 * node loses its counter; a node that loses it (restart without persistence) falls back to its clock.
 * Usually the counters are in step and no second round is needed; lagging nodes are raised in the
 * background.
 */
final class RedlockBackend implements LockBackend {
  private static final Logger log = LoggerFactory.getLogger(RedlockBackend.class);
  private static final Capabilities CAPABILITIES = new Capabilities("redlock",
      EnumSet.of(LockKind.EXCLUSIVE), FencingGuarantee.CLOCK_FLOORED, true);

  private final List<RedisBackend> nodes;
  private final int quorum;
  private final Duration nodeTimeout;
  private final long retryDelayMillis;
  private final ClientResources resources;
  private final AtomicBoolean closed = new AtomicBoolean();
  /** The client's events; see {@link NodeEvents}. */
  private volatile BackendEvents events = BackendEvents.NONE;
  /** Whether {@link BackendEvents#connectionLost} was reported and the quorum has not come back since. */
  private final AtomicBoolean quorumLostReported = new AtomicBoolean();
  /** Eviction notices per hold (kind, name, owner): the nodes that reported it, and when the first did. */
  private final Map<String, Evictions> evictions = new ConcurrentHashMap<>();

  RedlockBackend(List<io.lettuce.core.RedisURI> uris, Duration nodeTimeout, Duration retryDelay,
      Duration waiterRecheck, Duration fenceRetention) {
    // a node that comes back is reconnected within a second (Lettuce's default backoff reaches 30 s)
    this.resources = DefaultClientResources.builder().ioThreadPoolSize(2).computationThreadPoolSize(2)
        .reconnectDelay(io.lettuce.core.resource.Delay.exponential(Duration.ZERO,
            RedisBackend.MAX_RECONNECT_DELAY, 2, TimeUnit.MILLISECONDS))
        .build();
    this.nodes = new ArrayList<>();
    for (io.lettuce.core.RedisURI uri : uris) {
      nodes.add(new RedisBackend(uri, nodeTimeout, waiterRecheck, fenceRetention,
          RedisBackend.TokenRule.COUNTER, resources));
    }
    this.quorum = uris.size() / 2 + 1;
    this.nodeTimeout = nodeTimeout;
    this.retryDelayMillis = retryDelay.toMillis();
  }

  int quorum() {
    return quorum;
  }

  /** What the nodes' answers to one question about an owner's hold establish; see {@link #verdict}. */
  enum Verdict {
    /** A majority answered yes. */
    YES,
    /** More than N − quorum answered no: a majority can no longer say yes. */
    NO,
    /** Neither: the nodes that did not answer decide, so nobody can tell. */
    UNKNOWN
  }

  /**
   * The one rule for every question put to all nodes about a hold (re-entry, renewal, release): yes
   * needs a majority; no needs more than N − quorum noes, i.e. so many that the nodes which did not
   * answer could not make a majority for yes even together. Anything in between is unknown, never
   * "no": a node that timed out, failed, or answered for only some leases may well hold the lock.
   *
   * @param yes nodes that answered yes
   * @param no nodes that answered no
   * @return the verdict; every other node counts as no answer
   */
  Verdict verdict(int yes, int no) {
    if (yes >= quorum) {
      return Verdict.YES;
    }
    if (no > nodes.size() - quorum) {
      return Verdict.NO;
    }
    return Verdict.UNKNOWN;
  }

  /** TLS settings for the nodes with a {@code rediss} URI; call before {@link #open}. */
  void tls(RedisTls tls) {
    nodes.forEach(node -> node.tls(tls));
  }

  List<String> nodeDescriptions() {
    return nodes.stream().map(RedisBackend::description).toList();
  }

  /**
   * Connects to every node at once; a minority may be down and is retried on use. Each node reports its
   * connection and eviction events to {@link NodeEvents}, which tells the client only what concerns a
   * Redlock lease as a whole.
   */
  @Override
  public void open(BackendContext context) {
    this.events = context.events();
    List<CompletableFuture<Void>> connects = new ArrayList<>();
    for (int i = 0; i < nodes.size(); i++) {
      RedisBackend node = nodes.get(i);
      try {
        connects.add(node.openAsync(context.withEvents(new NodeEvents(i))));
      } catch (RuntimeException e) {
        connects.add(CompletableFuture.failedFuture(e));
      }
    }
    long deadline = System.nanoTime() + nodeTimeout.toNanos() * 3 + TimeUnit.SECONDS.toNanos(1);
    int connected = 0;
    List<String> down = new ArrayList<>();
    List<Integer> reached = new ArrayList<>();
    LockException misconfigured = null;
    for (int i = 0; i < nodes.size(); i++) {
      try {
        connects.get(i).get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        connected++;
        reached.add(i);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        close();
        throw new BackendUnavailableException("interrupted while connecting to the Redlock nodes", e);
      } catch (ExecutionException | TimeoutException e) {
        RuntimeException failure = e instanceof TimeoutException
            ? new BackendUnavailableException("no answer within the connect bound", e)
            : RedisExceptions.translate(e, "connect");
        if (failure instanceof io.locksmith.BackendConfigurationException c && misconfigured == null) {
          misconfigured = c;
        }
        down.add(nodes.get(i).description() + " (" + failure.getMessage() + ")");
      }
    }
    if (connected < quorum) {
      close();
      String message = "only " + connected + " of " + nodes.size() + " Redlock nodes could be reached, " + quorum
          + " needed; unreachable: " + down;
      // a node that does not fit the configuration will not come back by itself: say so, not "unavailable"
      throw misconfigured != null ? new io.locksmith.BackendConfigurationException(message, misconfigured)
          : new BackendUnavailableException(message);
    }
    try {
      rejectOneServerTwice(reached);
    } catch (RuntimeException e) {
      close();
      throw e;
    }
    if (!down.isEmpty()) {
      log.warn("Redlock starts with {} of {} nodes; unreachable for now: {}", connected, nodes.size(), down);
    }
  }

  /**
   * The builder compares addresses as written; this catches one server reached under two addresses
   * (a name and its IP, a DNS alias, a port forward): each reached node reports the run id its server
   * drew at start, and two equal ids are one process, whose "majority" would be a single vote. A node
   * that cannot say (slow, INFO disabled, a server without run ids) is not compared; nor is a node
   * that was unreachable at start.
   *
   * @throws IllegalArgumentException if two of {@code reached} report the same run id
   */
  private void rejectOneServerTwice(List<Integer> reached) {
    List<CompletableFuture<String>> infos = new ArrayList<>();
    for (int i : reached) {
      try {
        infos.add(nodes.get(i).commands("read the server's run id").info("server").toCompletableFuture());
      } catch (RuntimeException e) {
        infos.add(CompletableFuture.failedFuture(e));
      }
    }
    // each INFO is bounded by the node timeout on its connection; this bound only guards against a stall
    long deadline = System.nanoTime() + nodeTimeout.toNanos() * 2 + TimeUnit.SECONDS.toNanos(1);
    Map<String, Integer> byRunId = new HashMap<>();
    for (int k = 0; k < reached.size(); k++) {
      int node = reached.get(k);
      String runId;
      try {
        runId = runId(infos.get(k).get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new BackendUnavailableException("interrupted while asking the Redlock nodes for their run ids",
            e);
      } catch (ExecutionException | TimeoutException | RuntimeException e) {
        log.info("Redlock: {} did not report its run id, so it is not compared with the others: {}",
            nodes.get(node).description(), RedisExceptions.unwrap(e).toString());
        continue;
      }
      if (runId == null) {
        continue;
      }
      Integer same = byRunId.putIfAbsent(runId, node);
      if (same != null) {
        throw new IllegalArgumentException("nodes " + nodes.get(same).description() + " and "
            + nodes.get(node).description() + " are the same Redis server (run_id " + runId + ") under two "
            + "addresses: Redlock's nodes must be independent masters");
      }
    }
  }

  /** @return the {@code run_id} field of an {@code INFO server} reply, or null if it has none */
  static String runId(String info) {
    for (String line : info.split("\\R")) {
      if (line.startsWith("run_id:")) {
        String id = line.substring("run_id:".length()).trim();
        return id.isEmpty() ? null : id;
      }
    }
    return null;
  }

  @Override
  public Capabilities capabilities() {
    return CAPABILITIES;
  }

  // ------------------------------------------------------------------ acquire

  @Override
  public CompletionStage<AcquireReply> acquire(String name, String owner, long leaseMillis,
      AcquireMode mode, String waiterId) {
    AcquireRound round = new AcquireRound(name, owner, mode);
    // the same call for every node, built once, so that each send follows the previous one at once
    RedisBackend.AcquireCall call;
    try {
      call = nodes.get(0).acquireCall(name, owner, leaseMillis, mode, waiterId);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    for (int i = 0; i < nodes.size(); i++) {
      int node = i;
      CompletionStage<List<Object>> reply;
      try {
        reply = nodes.get(i).acquireRaw(call);
      } catch (RuntimeException e) {
        reply = CompletableFuture.failedFuture(e);
      }
      reply.whenComplete((r, f) -> round.onNodeReply(node, r, f));
    }
    return round.result;
  }

  /** One acquire sent to every node; decides as soon as the replies so far settle the outcome. */
  private final class AcquireRound {
    final String name;
    final String owner;
    final AcquireMode mode;
    final CompletableFuture<AcquireReply> result = new CompletableFuture<>();
    /** Per node: its token if granted, else null. */
    final Long[] tokens = new Long[nodes.size()];
    /** Per node: its counter if it refused, else null. */
    final Long[] counters = new Long[nodes.size()];
    /** Per node: whether it failed to answer (it may still have granted). */
    final boolean[] failedNodes = new boolean[nodes.size()];
    int granted;
    int refused;
    /** Nodes that answered a re-entry with "not held by this owner" (a subset of {@code refused}). */
    int notHeld;
    int failed;
    long minRetry = Long.MAX_VALUE;
    int holds;
    Throwable firstFailure;
    /** Set once decided: the token to raise late nodes to, or -1 if the round failed. */
    long decidedToken;
    boolean decided;

    AcquireRound(String name, String owner, AcquireMode mode) {
      this.name = name;
      this.owner = owner;
      this.mode = mode;
    }

    void onNodeReply(int node, List<Object> reply, Throwable failure) {
      Runnable next;
      synchronized (this) {
        if (failure != null) {
          failed++;
          failedNodes[node] = true;
          if (firstFailure == null) {
            firstFailure = RedisExceptions.unwrap(failure);
          }
        } else {
          count(node, reply);
        }
        if (decided) {
          long token = decidedToken;
          // a re-entry mints nothing: the holds keep the tokens they have
          next = mode == AcquireMode.REENTER || token <= 0 ? null : () -> catchUp(node, token);
        } else {
          next = decide();
        }
      }
      if (next != null) {
        next.run();
      }
    }

    /** Guarded by this. A reply that cannot be read counts as a failed node, never as no answer. */
    private void count(int node, List<Object> reply) {
      try {
        AcquireReply r = RedisBackend.toAcquireReply(reply);
        Long counter = r.granted() || r.lost() ? null : Long.parseLong(String.valueOf(reply.get(2)));
        if (r.granted()) {
          granted++;
          tokens[node] = r.fencingToken();
          holds = Math.max(holds, r.holdCount());
        } else {
          refused++;
          if (r.lost()) {
            notHeld++;
          } else {
            minRetry = Math.min(minRetry, r.retryAfterMillis());
            counters[node] = counter;
          }
        }
      } catch (RuntimeException malformed) {
        failed++;
        failedNodes[node] = true;
        if (firstFailure == null) {
          firstFailure = new LockException("unreadable acquire reply " + reply + " from "
              + nodes.get(node).description(), malformed);
        }
      }
    }

    /** Guarded by this. Returns what to do outside the monitor once the outcome is known. */
    private Runnable decide() {
      if (granted >= quorum) {
        decided = true;
        long token = 0;
        for (Long t : tokens) {
          if (t != null) {
            token = Math.max(token, t);
          }
        }
        decidedToken = token;
        if (mode == AcquireMode.REENTER) {
          AcquireReply reply = AcquireReply.granted(token, holds);
          return () -> result.complete(reply);
        }
        return commit(token);
      }
      // A failure waits for every node (each bounded by the node timeout), so that its clean-up
      // releases are queued on every connection before the caller can start another round: a late
      // release must never land after, and undo, the next round's grant of the same owner.
      if (refused + failed > nodes.size() - quorum && granted + refused + failed == nodes.size()) {
        decided = true;
        decidedToken = -1;
        return this::fail;
      }
      return null; // not settled yet
    }

    /**
     * Guarded by this. Makes {@code token} held by a majority before reporting it: nodes that granted
     * less are raised (and waited for) only if those that granted exactly {@code token} are too few.
     */
    private Runnable commit(long token) {
      int atToken = 0;
      List<Integer> lagging = new ArrayList<>();
      for (int i = 0; i < tokens.length; i++) {
        if (tokens[i] != null) {
          if (tokens[i] == token) {
            atToken++;
          } else {
            lagging.add(i);
          }
        }
      }
      int holdsNow = holds;
      List<Integer> behind = new ArrayList<>();
      for (int i = 0; i < counters.length; i++) {
        if (counters[i] != null && counters[i] < token) {
          behind.add(i);
        }
      }
      if (atToken >= quorum) {
        return () -> {
          result.complete(AcquireReply.granted(token, holdsNow));
          lagging.forEach(i -> raise(i, owner, token));
          behind.forEach(i -> raise(i, "", token));
        };
      }
      int needed = quorum - atToken;
      return () -> {
        behind.forEach(i -> raise(i, "", token));
        List<CompletableFuture<Boolean>> raises = new ArrayList<>();
        for (int i : lagging) {
          raises.add(raise(i, owner, token));
        }
        Tally.atLeast(raises, needed).whenComplete((enough, f) -> {
          if (Boolean.TRUE.equals(enough)) {
            result.complete(AcquireReply.granted(token, holdsNow));
          } else {
            log.debug("Redlock: token {} for '{}' reached too few nodes; giving the grant back", token, name);
            releaseEverywhere(name, owner).whenComplete((v, ignored) ->
                result.complete(AcquireReply.busy(randomRetry())));
          }
        });
      };
    }

    /** A node answered after the grant: bring its counter (and its hold's token) up to date. */
    private void catchUp(int node, long token) {
      Long t;
      Long c;
      synchronized (this) {
        t = tokens[node];
        c = counters[node];
      }
      if (t != null && t > token) {
        // Its counter ran ahead (first use: each node seeds from its own clock). Its hold shows the
        // lease's token, and the others catch up with its counter, so the next grant needs one round.
        raise(node, owner, token);
        for (int i = 0; i < nodes.size(); i++) {
          if (i != node) {
            raise(i, "", t);
          }
        }
      } else if (t != null && t < token) {
        raise(node, owner, token);
      } else if (c != null && c < token) {
        raise(node, "", token);
      }
    }

    /**
     * No majority: give back what was granted, and release on the nodes that failed to answer too (they
     * may have granted). Then report.
     */
    private void fail() {
      int f;
      Throwable cause;
      int refusedNow;
      long retry;
      int grantedNow;
      int notHeldNow;
      List<CompletableFuture<Integer>> cleanups = new ArrayList<>();
      List<Integer> toRelease = new ArrayList<>();
      synchronized (this) {
        f = failed;
        cause = firstFailure;
        refusedNow = refused;
        retry = minRetry;
        grantedNow = granted;
        notHeldNow = notHeld;
        for (int i = 0; i < tokens.length; i++) {
          // A failed re-entry must not free the hold the owner still has: it only takes back the
          // increment where it was counted. A failed acquisition gives back everything, on the
          // nodes that did not answer too (they may have granted).
          if (tokens[i] != null || (failedNodes[i] && mode == AcquireMode.NEW)) {
            toRelease.add(i);
          }
        }
      }
      toRelease.forEach(i -> cleanups.add(releaseOn(i, mode == AcquireMode.NEW)));
      // Report only once the clean-up is done: the caller's next round may be sent from another
      // thread, and Lettuce orders commands per connection only as they reach its event loop, so an
      // earlier release could otherwise land after, and undo, the next round's grant of this owner.
      CompletableFuture.allOf(cleanups.toArray(new CompletableFuture<?>[0])).whenComplete((v, ignored) -> {
        if (mode == AcquireMode.REENTER) {
          // The hold is lost only if so many nodes no longer have it that no majority can; with fewer
          // noes, the silent nodes may still hold it (a bare-majority grant with one holder slow), and
          // calling that lost would drop a lock that is still held and stop its renewal.
          if (verdict(grantedNow, notHeldNow) == Verdict.NO) {
            result.complete(AcquireReply.lostHold());
          } else {
            result.completeExceptionally(new BackendUnavailableException("Redlock could not re-enter '"
                + name + "': " + grantedNow + " of " + nodes.size() + " nodes confirmed the hold, "
                + notHeldNow + " no longer have it and " + f + " did not answer; " + quorum
                + " are needed either way, so the hold is left as it was; first failure: " + cause, cause));
          }
        } else if (f > nodes.size() - quorum) {
          result.completeExceptionally(new BackendUnavailableException("Redlock could not acquire '" + name
              + "': " + f + " of " + nodes.size() + " nodes failed, " + quorum
              + " answers needed; first failure: " + cause, cause));
        } else {
          // Held elsewhere by a majority: wait for its release (wake-up) or its lease. Split vote or
          // failed nodes: retry after a random delay so that contenders do not collide again.
          result.complete(AcquireReply.busy(refusedNow >= quorum ? retry : randomRetry()));
        }
      });
    }

    private CompletableFuture<Integer> releaseOn(int node, boolean all) {
      CompletionStage<Integer> r;
      try {
        r = nodes.get(node).release(name, owner, all);
      } catch (RuntimeException e) {
        r = CompletableFuture.failedFuture(e);
      }
      return r.toCompletableFuture().handle((v, e) -> v == null ? -1 : v);
    }

    private CompletableFuture<Boolean> raise(int node, String holder, long token) {
      CompletionStage<Long> r;
      try {
        r = nodes.get(node).raiseFence(name, holder, token);
      } catch (RuntimeException e) {
        r = CompletableFuture.failedFuture(e);
      }
      return r.toCompletableFuture().handle((v, f) -> {
        if (f != null) {
          log.debug("Redlock: could not raise the token of '{}' on {}: {}", name,
              nodes.get(node).description(), f.toString());
        }
        return f == null;
      });
    }
  }

  private long randomRetry() {
    return ThreadLocalRandom.current().nextLong(1, retryDelayMillis + 1);
  }

  /** Releases every hold of {@code owner} on every node; completes when all answered or timed out. */
  private CompletableFuture<Void> releaseEverywhere(String name, String owner) {
    List<CompletableFuture<Integer>> releases = sendToAll(node -> node.release(name, owner, true));
    return CompletableFuture.allOf(releases.stream()
        .map(f -> f.handle((v, e) -> null)).toArray(CompletableFuture[]::new));
  }

  private <T> List<CompletableFuture<T>> sendToAll(java.util.function.Function<RedisBackend,
      CompletionStage<T>> op) {
    List<CompletableFuture<T>> out = new ArrayList<>(nodes.size());
    for (RedisBackend node : nodes) {
      try {
        out.add(op.apply(node).toCompletableFuture());
      } catch (RuntimeException e) {
        out.add(CompletableFuture.failedFuture(e));
      }
    }
    return out;
  }

  // ------------------------------------------------------------------ release, renew

  /**
   * Goes to every node and waits for all (each bounded by the node timeout). Owned if a majority still
   * had the owner's hold; not owned if so many did not that no majority can ({@link #verdict});
   * otherwise the nodes that failed to answer decide, so the outcome is unknown and this fails.
   */
  @Override
  public CompletionStage<Integer> release(String name, String owner, boolean all) {
    List<CompletableFuture<Integer>> replies = sendToAll(node -> node.release(name, owner, all));
    // Waits for every node, never only a majority: the core reuses an owner id for the next attempt of
    // the same acquisition after a give-back, and a release still in flight (e.g. a NOSCRIPT retry
    // sent from an I/O thread) could otherwise land after, and undo, that attempt's grant.
    return whenAll(replies, (values, failures) -> {
      int owned = 0;
      int notOwned = 0;
      int left = 0;
      for (Integer v : values) {
        if (v == null) {
          continue;
        }
        if (v >= 0) {
          owned++;
          left = Math.max(left, v);
        } else {
          notOwned++;
        }
      }
      switch (verdict(owned, notOwned)) {
        case YES:
          return left;
        case NO:
          return -1;
        default:
          throw unavailable("release '" + name + "'", failures);
      }
    });
  }

  /**
   * Each lease is extended only if a majority confirms it and lost only if a majority can no longer
   * confirm it ({@link #verdict}); a lease the answers cannot decide is reported as unknown
   * ({@code null}). A node may answer for some leases and not others (its renewal is split into several
   * script calls and only some failed): a lease it has no answer for counts as no answer from it.
   *
   * <p>Decided as soon as the answers so far settle every lease, as an acquisition is: a node that is slow
   * or paused must not hold the verdict back for its whole node timeout, which may be longer than what is
   * left of the leases' validity (a majority that confirmed them would then see them lost all the same).
   * A confirmation counts from when the renewal was sent, so an early verdict is as safe as a late one.
   */
  @Override
  public CompletionStage<List<Boolean>> renew(List<RenewRequest> requests) {
    RenewRound round = new RenewRound(requests.size());
    List<CompletableFuture<List<Boolean>>> replies = sendToAll(node -> node.renew(requests));
    for (CompletableFuture<List<Boolean>> reply : replies) {
      reply.whenComplete(round::onNodeReply);
    }
    return round.result;
  }

  /** One renewal sent to every node: per lease, the nodes that confirmed it and those that did not. */
  private final class RenewRound {
    final CompletableFuture<List<Boolean>> result = new CompletableFuture<>();
    final int[] yes;
    final int[] no;
    int unanswered = nodes.size();

    RenewRound(int leases) {
      yes = new int[leases];
      no = new int[leases];
    }

    void onNodeReply(List<Boolean> answers, Throwable failure) {
      List<Boolean> out;
      synchronized (this) {
        unanswered--;
        if (result.isDone()) {
          return;
        }
        for (int r = 0; answers != null && r < yes.length; r++) {
          Boolean answer = answers.get(r);
          if (Boolean.TRUE.equals(answer)) {
            yes[r]++;
          } else if (Boolean.FALSE.equals(answer)) {
            no[r]++;
          }
        }
        out = new ArrayList<>(yes.length);
        boolean settled = true;
        for (int r = 0; r < yes.length; r++) {
          Verdict verdict = verdict(yes[r], no[r]);
          settled &= verdict != Verdict.UNKNOWN;
          // UNKNOWN: too few answers to tell, UNCERTAIN for this lease alone, retried within validity
          out.add(verdict == Verdict.UNKNOWN ? null : verdict == Verdict.YES);
        }
        if (!settled && unanswered > 0) {
          return; // the nodes still to answer decide
        }
      }
      result.complete(out);
    }
  }

  @Override
  public void cancelWait(String name, String waiterId) {
    for (RedisBackend node : nodes) {
      node.cancelWait(name, waiterId);
    }
  }

  @Override
  public void passWakeup(String name, String goneWaiterId) {
    for (RedisBackend node : nodes) {
      node.passWakeup(name, goneWaiterId);
    }
  }

  /** The holder a majority of nodes agrees on, with the shortest remaining TTL among them. */
  @Override
  public CompletionStage<Optional<LockInfo>> inspect(String name) {
    List<CompletableFuture<Optional<LockInfo>>> replies = sendToAll(node -> node.inspect(name));
    return whenAll(replies, (values, failures) -> {
      Map<String, List<LockInfo>> byOwner = new HashMap<>();
      int answered = 0;
      for (Optional<LockInfo> v : values) {
        if (v != null) {
          answered++;
          v.ifPresent(info -> byOwner.computeIfAbsent(info.owner(), k -> new ArrayList<>()).add(info));
        }
      }
      if (answered < quorum) {
        throw unavailable("inspect '" + name + "'", failures);
      }
      for (List<LockInfo> infos : byOwner.values()) {
        if (infos.size() >= quorum) {
          LockInfo first = infos.get(0);
          Map<Long, Integer> tokenVotes = new HashMap<>();
          int waiters = 0;
          Duration ttl = first.remainingTtl();
          for (LockInfo i : infos) {
            tokenVotes.merge(i.fencingToken(), 1, Integer::sum);
            waiters = Math.max(waiters, i.waiters());
            ttl = ttl.compareTo(i.remainingTtl()) < 0 ? ttl : i.remainingTtl();
          }
          // a majority records the lease's token before the grant is reported; a node that granted
          // late may show another value until it is brought in step
          long token = tokenVotes.entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow()
              .getKey();
          return Optional.of(new LockInfo(name, first.owner(), first.holdCount(), token, ttl, waiters));
        }
      }
      return Optional.empty();
    });
  }

  @Override
  public CompletionStage<Boolean> forceUnlock(String name) {
    List<CompletableFuture<Boolean>> replies = sendToAll(node -> node.forceUnlock(name));
    return whenAll(replies, (values, failures) -> {
      if (values.stream().filter(v -> v != null).count() < quorum) {
        throw unavailable("force-unlock '" + name + "'", failures);
      }
      return values.stream().anyMatch(Boolean.TRUE::equals);
    });
  }

  // ------------------------------------------------------------------ lease signals

  /** The nodes that reported removing one hold, and when the first did. */
  private record Evictions(Set<Integer> nodes, long since) {}

  /** Nodes kept after the first report of an eviction the others never confirm (e.g. one node's own). */
  private static final long EVICTION_MEMORY_NANOS = TimeUnit.MINUTES.toNanos(1);
  /** Holds whose partial evictions are remembered at most. */
  private static final int EVICTIONS_MAX = 1024;

  /**
   * One node's events, combined into what holds for a Redlock lease. A lease is a hold on a majority, so
   * losing one node's connection changes nothing for it: the client hears {@code connectionLost} only when
   * fewer nodes than the quorum are connected (then no renewal can confirm any lease), and an eviction only
   * once so many nodes reported removing the hold that the others could not make a majority for it (a
   * force-unlock reaches every node, so that is at once). Every node that comes back has every lease
   * verified: a node that restarted empty may have taken the majority of a lease with it.
   */
  private final class NodeEvents implements BackendEvents {
    private final int node;

    NodeEvents(int node) {
      this.node = node;
    }

    @Override
    public void connectionLost(String cause) {
      int connected = connectedNodes();
      if (connected < quorum && !closed.get() && quorumLostReported.compareAndSet(false, true)) {
        events.connectionLost("only " + connected + " of " + nodes.size() + " Redlock nodes are connected, "
            + quorum + " needed (" + cause + ")");
      } else {
        log.debug("Redlock node {} disconnected ({}); {} of {} connected", nodes.get(node).description(), cause,
            connected, nodes.size());
      }
    }

    @Override
    public void connectionRestored() {
      if (connectedNodes() >= quorum) {
        quorumLostReported.set(false);
      }
      events.connectionRestored();
    }

    @Override
    public void ownerEvicted(HoldKind kind, String name, String owner, String cause) {
      String hold = kind + " " + owner + " " + name;
      long now = System.nanoTime();
      if (evictions.size() >= EVICTIONS_MAX) {
        evictions.values().removeIf(e -> now - e.since() > EVICTION_MEMORY_NANOS);
      }
      Evictions e = evictions.computeIfAbsent(hold, h -> new Evictions(ConcurrentHashMap.newKeySet(), now));
      e.nodes().add(node);
      if (e.nodes().size() > nodes.size() - quorum && evictions.remove(hold, e)) {
        events.ownerEvicted(kind, name, owner, cause + " on " + e.nodes().size() + " of " + nodes.size()
            + " Redlock nodes");
      }
    }
  }

  /** @return how many nodes have both connections up, as far as each knows */
  int connectedNodes() {
    int n = 0;
    for (RedisBackend node : nodes) {
      if (node.connectionUp()) {
        n++;
      }
    }
    return n;
  }

  /** Idempotent: a failed {@link #open} closes, and so does the client that called it. */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    for (RedisBackend node : nodes) {
      node.close();
    }
    RedisBackend.shutdown(resources);
  }

  // ------------------------------------------------------------------ helpers

  /** Combines per-node replies once all are in: values (null where a node failed) and failures. */
  private static <T, R> CompletionStage<R> whenAll(List<CompletableFuture<T>> replies,
      java.util.function.BiFunction<List<T>, List<Throwable>, R> combine) {
    return CompletableFuture.allOf(replies.stream().map(f -> f.handle((v, e) -> null))
        .toArray(CompletableFuture[]::new)).thenApply(ignored -> {
          List<T> values = new ArrayList<>(replies.size());
          List<Throwable> failures = new ArrayList<>();
          for (CompletableFuture<T> f : replies) {
            try {
              values.add(f.getNow(null));
            } catch (RuntimeException e) {
              values.add(null);
              failures.add(RedisExceptions.unwrap(e));
            }
          }
          return combine.apply(values, failures);
        });
  }

  private LockException unavailable(String what, List<Throwable> failures) {
    Throwable cause = failures.isEmpty() ? null : failures.get(0);
    return new BackendUnavailableException("Redlock could not " + what + ": " + failures.size() + " of "
        + nodes.size() + " nodes failed and the others do not make a majority of " + quorum
        + (cause == null ? "" : "; first failure: " + cause), cause);
  }

  /** Counts successes among futures and completes as soon as the count is settled. */
  static final class Tally {
    private Tally() {}

    static CompletableFuture<Boolean> atLeast(List<CompletableFuture<Boolean>> votes, int needed) {
      CompletableFuture<Boolean> out = new CompletableFuture<>();
      if (needed <= 0) {
        out.complete(true);
        return out;
      }
      int[] yesNo = new int[2];
      BiConsumer<Boolean, Throwable> count = (v, f) -> {
        boolean settled;
        boolean enough;
        synchronized (yesNo) {
          yesNo[Boolean.TRUE.equals(v) && f == null ? 0 : 1]++;
          enough = yesNo[0] >= needed;
          settled = enough || yesNo[1] > votes.size() - needed;
        }
        if (settled) {
          out.complete(enough);
        }
      };
      votes.forEach(v -> v.whenComplete(count));
      if (votes.size() < needed) {
        out.complete(false);
      }
      return out;
    }
  }
}
