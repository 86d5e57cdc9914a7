package io.locksmith.zookeeper;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * What this client can prove about its ZooKeeper sessions: for each, the negotiated timeout and the send
 * time of the latest request the server answered. Thread-safe.
 *
 * <p><b>The bound.</b> A ZooKeeper server expires a session when it has heard nothing from the client
 * for the session timeout: every packet it receives pushes the expiry to at least receipt + timeout
 * (rounded up to the next tick). A reply to a request this client sent at {@code t} proves the server
 * received something at or after {@code t}. So the server cannot expire the session before {@code
 * lastProof + timeout} of its own clock; with an allowance for the server's clock running fast
 * ({@code timeout × driftFactor + driftFloor}) and one for this client's own timer and listeners being
 * late (the scheduling allowance; both together are {@link io.locksmith.ClientOptions#validityMarginFor}),
 * not before {@link #deadline(long)} of ours. Up to that moment the session's nodes are ours; from it on they may
 * not be, and every lease on them is to be treated as lost.
 */
final class Sessions {
  /** One session, as far as this client can prove. */
  static final class Session {
    final long id;
    /** The negotiated timeout; the requested one until the handle reports it. */
    volatile long timeoutNanos;
    /** Send time ({@link System#nanoTime()}) of the newest answered request, 0 if none. */
    volatile long lastProof;
    /** The handle has moved to another session: this one is over for this client. */
    volatile boolean over;

    Session(long id, long timeoutNanos) {
      this.id = id;
      this.timeoutNanos = timeoutNanos;
    }
  }

  private final long requestedTimeoutNanos;
  private final Function<Duration, Duration> drift;
  private final Map<Long, Session> sessions = new ConcurrentHashMap<>();
  private volatile long current;

  /**
   * @param requestedTimeout the session timeout asked for
   * @param drift the clock-drift plus scheduling allowance for a duration
   */
  Sessions(Duration requestedTimeout, Function<Duration, Duration> drift) {
    this.requestedTimeoutNanos = requestedTimeout.toNanos();
    this.drift = drift;
  }

  private Session session(long id) {
    return sessions.computeIfAbsent(id, i -> new Session(i, requestedTimeoutNanos));
  }

  /**
   * A request sent at {@code sentNanos} was answered within session {@code id}.
   *
   * @param id the session id (0 is ignored)
   * @param sentNanos the request's send time
   */
  void proof(long id, long sentNanos) {
    if (id == 0) {
      return;
    }
    Session s = session(id);
    synchronized (s) {
      if (s.lastProof == 0 || sentNanos - s.lastProof > 0) {
        s.lastProof = sentNanos;
      }
    }
  }

  /**
   * The client's handle is in session {@code id} with the negotiated timeout.
   *
   * @return the session it was in before, if that one is now over, else 0
   */
  synchronized long learn(long id, int negotiatedTimeoutMillis) {
    if (id == 0) {
      return 0;
    }
    Session s = session(id);
    if (negotiatedTimeoutMillis > 0) {
      s.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(negotiatedTimeoutMillis);
    }
    long before = current;
    current = id;
    if (before != 0 && before != id) {
      Session old = sessions.get(before);
      if (old != null) {
        old.over = true;
      }
      return before;
    }
    return 0;
  }

  /** @return the session the handle was last seen in, or 0 */
  long current() {
    return current;
  }

  /**
   * @param id a session id
   * @return whether the client has moved on from it (the handle is in another session)
   */
  boolean isOver(long id) {
    Session s = sessions.get(id);
    return s != null && s.over;
  }

  /**
   * @param id a session id
   * @return the earliest moment ({@link System#nanoTime()}) the server may expire it: last proof +
   *     timeout − drift and scheduling allowance; {@link Long#MIN_VALUE} if it is over or nothing was ever proven
   */
  long deadline(long id) {
    Session s = sessions.get(id);
    if (s == null || s.over || s.lastProof == 0) {
      return Long.MIN_VALUE;
    }
    long timeout = s.timeoutNanos;
    return s.lastProof + timeout - drift.apply(Duration.ofNanos(timeout)).toNanos();
  }

  /**
   * @param id a session id
   * @return its timeout as negotiated (or requested, until known)
   */
  Duration timeout(long id) {
    Session s = sessions.get(id);
    return Duration.ofNanos(s != null ? s.timeoutNanos : requestedTimeoutNanos);
  }

  /** Forgets sessions that are over and hold nothing; {@code inUse} says which are still referenced. */
  void prune(java.util.Set<Long> inUse) {
    sessions.values().removeIf(s -> s.over && !inUse.contains(s.id));
  }
}
