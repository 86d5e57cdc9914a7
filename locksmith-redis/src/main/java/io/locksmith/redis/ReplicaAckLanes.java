package io.locksmith.redis;

import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.resource.ClientResources;
import io.locksmith.BackendUnavailableException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The connections reserved for grants that replicas must acknowledge ("lanes"), kept apart from the
 * backend's shared command connection.
 *
 * <p><b>Why.</b> {@code WAIT} counts the replicas that have the writes of <em>the connection it is sent
 * on</em>, so a grant's script and its {@code WAIT} must travel on one connection. But Redis blocks that
 * connection until enough replicas answered or the timeout passed; on the shared connection every renewal,
 * release and acquisition of the client queued behind it and timed out whenever a replica lagged (issue 12
 * item 1). So each acknowledged acquisition borrows a lane for itself, runs its script on it, sends its
 * {@code WAIT} there and gives the lane back: nothing else ever waits behind that {@code WAIT}.
 *
 * <p><b>Pool.</b> Lanes are opened when first needed, at most {@link #MAX_LANES}, and kept for reuse. When
 * all are busy a borrower queues for the next one given back, for at most the command timeout, then fails
 * with {@link BackendUnavailableException}. A lane whose command failed is closed rather than reused (it
 * may still have a command in flight on the server). {@link #retireAll()} closes every lane, the busy ones
 * when they come back: the backend calls it when it moves to another master (Sentinel), so no later grant
 * goes to the old one.
 *
 * <p>Thread-safe; never blocks a caller. Every future it returns completes within the command timeout
 * (waiting for a lane) or the opener's own bound (opening one).
 */
final class ReplicaAckLanes {
  private static final Logger log = LoggerFactory.getLogger(ReplicaAckLanes.class);
  /** Most lanes open at once: how many acknowledged acquisitions can wait for replicas in parallel. */
  static final int MAX_LANES = 8;

  /** One reserved connection: commands for the grant's script, and a {@code WAIT} on the same connection. */
  interface Lane {
    /** @return the commands of this lane's connection (on a Cluster: routed by slot within this lane) */
    RedisClusterAsyncCommands<String, String> commands();

    /**
     * {@code WAIT replicas timeoutMillis} on the connection that ran this lane's last write for {@code key}.
     *
     * @return the number of replicas that acknowledged, or exceptionally
     */
    CompletableFuture<Long> waitForReplicas(String key, int replicas, long timeoutMillis);

    /** Closes the connection without waiting; never throws. */
    void close();

    /**
     * @return the node this lane is connected to, where that decides whether its grants count (Sentinel:
     *     the master it was opened to), or null where it does not (one fixed node, or a Cluster)
     */
    default java.net.SocketAddress node() {
      return null;
    }
  }

  /** A lane lent out, with the generation it belongs to (an older one is closed when given back). */
  record Borrowed(Lane lane, long generation) {}

  private final Supplier<CompletableFuture<Lane>> opener;
  private final ClientResources resources;
  private final Duration borrowTimeout;
  private final String description;
  // guarded by this
  private final Deque<Lane> idle = new ArrayDeque<>();
  private final Deque<CompletableFuture<Borrowed>> waiting = new ArrayDeque<>();
  private int open; // lanes open, being opened or lent out
  private long generation;
  private boolean closed;

  /**
   * @param opener opens one lane (bounded by its own connect timeout)
   * @param resources schedules the borrowers' timeouts
   * @param borrowTimeout longest wait for a lane when all are busy
   * @param description the server, for messages
   */
  ReplicaAckLanes(Supplier<CompletableFuture<Lane>> opener, ClientResources resources, Duration borrowTimeout,
      String description) {
    this.opener = opener;
    this.resources = resources;
    this.borrowTimeout = borrowTimeout;
    this.description = description;
  }

  /**
   * @return completes with a lane for the caller's sole use until {@link #giveBack}; exceptionally with
   *     {@link BackendUnavailableException} if closed, if a new lane cannot be opened, or if every lane
   *     stayed busy for the borrow timeout
   */
  CompletableFuture<Borrowed> borrow() {
    CompletableFuture<Borrowed> out = new CompletableFuture<>();
    Borrowed ready = null;
    boolean openOne = false;
    long gen;
    synchronized (this) {
      if (closed) {
        return CompletableFuture.failedFuture(new BackendUnavailableException("client of " + description
            + " is closed"));
      }
      gen = generation;
      if (!idle.isEmpty()) {
        ready = new Borrowed(idle.pop(), generation);
      } else if (open < MAX_LANES) {
        open++;
        openOne = true;
      } else {
        waiting.add(out);
      }
    }
    if (ready != null) {
      out.complete(ready);
    } else if (openOne) {
      openFor(out, gen);
    } else {
      scheduleTimeout(out);
    }
    return out;
  }

  private void scheduleTimeout(CompletableFuture<Borrowed> out) {
    try {
      ScheduledFuture<?> timeout = resources.eventExecutorGroup().schedule(() -> {
        synchronized (this) {
          waiting.remove(out);
        }
        out.completeExceptionally(new BackendUnavailableException("all " + MAX_LANES + " connections to "
            + description + " reserved for grants that replicas must acknowledge stayed busy for "
            + borrowTimeout.toMillis() + " ms (replicas slow to acknowledge?)"));
      }, borrowTimeout.toNanos(), TimeUnit.NANOSECONDS);
      out.whenComplete((b, f) -> timeout.cancel(false));
    } catch (RuntimeException e) { // shutting down
      synchronized (this) {
        waiting.remove(out);
      }
      out.completeExceptionally(new BackendUnavailableException("client of " + description + " is closing", e));
    }
  }

  /** Opens a lane (one slot of {@link #open} is already counted for it) and hands it to {@code out}. */
  private void openFor(CompletableFuture<Borrowed> out, long gen) {
    CompletableFuture<Lane> opening;
    try {
      opening = opener.get();
    } catch (RuntimeException e) {
      opening = CompletableFuture.failedFuture(e);
    }
    opening.whenComplete((lane, failure) -> {
      if (failure != null) {
        dropSlot();
        out.completeExceptionally(RedisExceptions.translate(failure,
            "open a connection for a grant that replicas must acknowledge"));
        return;
      }
      Borrowed b = new Borrowed(lane, gen);
      if (!out.complete(b)) {
        giveBack(b, true);
      }
    });
  }

  /**
   * Returns a lane: to the next queued borrower, to the idle lanes, or closed if it failed, belongs to a
   * retired generation, or the pool is closed.
   *
   * @param healthy false when a command on the lane failed
   */
  void giveBack(Borrowed b, boolean healthy) {
    while (true) {
      CompletableFuture<Borrowed> next = null;
      Borrowed handOver = null;
      synchronized (this) {
        if (!healthy || b.generation() != generation || closed) {
          break;
        }
        next = waiting.poll();
        if (next == null) {
          idle.push(b.lane());
          return;
        }
        handOver = new Borrowed(b.lane(), generation);
      }
      if (next.complete(handOver)) {
        return;
      }
      // that borrower had timed out meanwhile: try the next one
    }
    b.lane().close();
    dropSlot();
  }

  /** A lane went away: its slot may now open one for the first queued borrower. */
  private void dropSlot() {
    CompletableFuture<Borrowed> next;
    long gen;
    synchronized (this) {
      open--;
      next = closed ? null : waiting.poll();
      if (next == null) {
        return;
      }
      open++;
      gen = generation;
    }
    openFor(next, gen);
  }

  /**
   * Closes the idle lanes now and every lent one when it is given back; lanes opened from now on connect
   * afresh (through Sentinel: to the master the sentinels name then).
   */
  void retireAll() {
    List<Lane> retired;
    synchronized (this) {
      generation++;
      retired = new ArrayList<>(idle);
      idle.clear();
      open -= retired.size();
    }
    if (!retired.isEmpty()) {
      log.debug("closing {} idle connection(s) for acknowledged grants to {}", retired.size(), description);
    }
    retired.forEach(Lane::close);
  }

  /** @return the current generation: it changes with every {@link #retireAll()} */
  synchronized long generationNow() {
    return generation;
  }

  /** @return lanes open, being opened or lent out (for tests) */
  synchronized int openLanes() {
    return open;
  }

  /** Closes every idle lane, fails queued borrowers; lent lanes are closed when given back. Never throws. */
  void close() {
    List<Lane> lanes;
    List<CompletableFuture<Borrowed>> queued;
    synchronized (this) {
      closed = true;
      lanes = new ArrayList<>(idle);
      idle.clear();
      open -= lanes.size();
      queued = new ArrayList<>(waiting);
      waiting.clear();
    }
    lanes.forEach(Lane::close);
    queued.forEach(q -> q.completeExceptionally(new BackendUnavailableException("client of " + description
        + " was closed")));
  }
}
