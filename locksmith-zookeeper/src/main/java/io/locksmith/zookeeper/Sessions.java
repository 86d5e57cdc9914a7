package io.locksmith.zookeeper;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * What this client can prove about its ZooKeeper sessions: for each, the negotiated timeout and the send
 * time of the latest request the <em>leader</em> is known to have heard of. Thread-safe.
 *
 * <p><b>The bound.</b> The leader expires a session when it has heard nothing of it for the session
 * timeout {@code T}: each time it hears of the session it pushes the expiry to at least that moment + T
 * (rounded up to its tick). A client connected to a follower is heard of through the follower, which
 * reports the sessions it served to the leader in its reply to the leader's ping, every half tick. A
 * request that went through the leader (a {@code sync}, a create) and was answered proves that the
 * follower was still in touch with the leader when it forwarded the request, so that the follower's ping
 * reply sent before it, at most half a tick (+ a network delay) earlier, reached the leader; with a
 * request of the session in every half tick (the heartbeat runs that often), that reply named the
 * session. So a request sent at {@code t} and answered through the leader proves the leader cannot expire
 * the session before {@code t − tick/2 + T} of its clock; with the allowance for the server's clock
 * running fast ({@code T × driftFactor + driftFloor}) and the one for this client's own timer and listeners
 * being late (the scheduling allowance; both together are {@link
 * io.locksmith.ClientOptions#validityMarginFor}, written {@code margin(T)} below), not before {@link
 * #bound(long)} of ours:
 *
 * <pre>  lastProof + T − tick/2 − margin(T)</pre>
 *
 * <p>A read ({@code exists}, {@code getChildren}) proves nothing: a follower cut off from its leader keeps
 * answering reads for up to {@code syncLimit × tick} while the leader expires the session. The tick is the
 * one the application declares, or else half of {@code T} (the largest tick for which ZooKeeper's
 * default minimum session timeout, two ticks, accepts {@code T}).
 */
final class Sessions {
  /** Where a session stands, as far as this client can prove. */
  enum Standing {
    /** Answered requests prove it alive until {@link Bound#until()}. */
    PROVEN,
    /** Nothing of it was ever answered through the leader: nothing proves it alive. */
    UNPROVEN,
    /** The handle moved to another session: this one is over for this client. */
    OVER
  }

  /**
   * The earliest moment the server may expire a session.
   *
   * @param standing whether {@code until} means anything
   * @param until {@link System#nanoTime()} of that moment, if {@code standing} is PROVEN
   */
  record Bound(Standing standing, long until) {
    /** @return whether the session may be expired at {@code nowNanos}: it is over, unproven or past its bound */
    boolean passed(long nowNanos) {
      return standing != Standing.PROVEN || nowNanos - until >= 0;
    }
  }

  /** What learning the handle's session changed. */
  record Learned(long over, boolean shorter) {
    static final Learned NOTHING = new Learned(0, false);
  }

  /** One session, as far as this client can prove. */
  static final class Session {
    final long id;
    /** The negotiated timeout; the requested one until the handle reports it. */
    volatile long timeoutNanos;
    /** Send time ({@link System#nanoTime()}) of the newest request answered through the leader. */
    volatile long lastProof;
    /** Whether {@link #lastProof} holds a time (any long is a valid {@code nanoTime}). */
    volatile boolean proven;
    /** The handle has moved to another session: this one is over for this client. */
    volatile boolean over;

    Session(long id, long timeoutNanos) {
      this.id = id;
      this.timeoutNanos = timeoutNanos;
    }
  }

  private final long requestedTimeoutNanos;
  private final Function<Duration, Duration> drift;
  /** The ensemble's tick as declared, or null: then half the session timeout. */
  private final Duration serverTick;
  private final Map<Long, Session> sessions = new ConcurrentHashMap<>();
  private volatile long current;

  /**
   * @param requestedTimeout the session timeout asked for, used until the handle reports the negotiated one
   * @param drift the clock-drift plus scheduling allowance for a duration
   * @param serverTick the ensemble's tick, or null if not declared
   */
  Sessions(Duration requestedTimeout, Function<Duration, Duration> drift, Duration serverTick) {
    this.requestedTimeoutNanos = requestedTimeout.toNanos();
    this.drift = drift;
    this.serverTick = serverTick;
  }

  private Session session(long id) {
    return sessions.computeIfAbsent(id, i -> new Session(i, requestedTimeoutNanos));
  }

  /**
   * A request sent at {@code sentNanos} went through the leader and was answered within session {@code id}.
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
      if (!s.proven || sentNanos - s.lastProof > 0) {
        s.lastProof = sentNanos;
        s.proven = true;
      }
    }
  }

  /**
   * The client's handle is in session {@code id} with the negotiated timeout.
   *
   * @param negotiatedTimeoutMillis as the handle reports it; 0 or less if it does not know it yet
   * @return the session it was in before if that one is now over, and whether the timeout of {@code id}
   *     is now shorter than the client assumed (every bound of it came earlier)
   */
  synchronized Learned learn(long id, int negotiatedTimeoutMillis) {
    if (id == 0) {
      return Learned.NOTHING;
    }
    Session s = session(id);
    boolean shorter = false;
    if (negotiatedTimeoutMillis > 0) {
      long negotiated = TimeUnit.MILLISECONDS.toNanos(negotiatedTimeoutMillis);
      shorter = negotiated < s.timeoutNanos;
      s.timeoutNanos = negotiated;
    }
    long before = current;
    current = id;
    if (before != 0 && before != id) {
      Session old = sessions.get(before);
      if (old != null) {
        old.over = true;
      }
      return new Learned(before, shorter);
    }
    return shorter ? new Learned(0, true) : Learned.NOTHING;
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
   * @return the earliest moment ({@link System#nanoTime()}) the server may expire it (last proof + T −
   *     tick/2 − margin(T)), or that it may be expired already: over, or nothing ever proven
   */
  Bound bound(long id) {
    Session s = sessions.get(id);
    if (s != null && s.over) {
      return new Bound(Standing.OVER, 0);
    }
    if (s == null || !s.proven) {
      return new Bound(Standing.UNPROVEN, 0);
    }
    long timeout = s.timeoutNanos;
    return new Bound(Standing.PROVEN, s.lastProof + timeout - followerLagNanos(timeout)
        - drift.apply(Duration.ofNanos(timeout)).toNanos());
  }

  /** How much earlier than the follower the leader may have last heard of a session: half a tick. */
  private long followerLagNanos(long timeoutNanos) {
    return tickNanos(timeoutNanos) / 2;
  }

  private long tickNanos(long timeoutNanos) {
    return serverTick != null ? serverTick.toNanos() : timeoutNanos / 2;
  }

  /**
   * How often a session must be proven for {@link #bound(long)} to hold: a sixth of its timeout, and at
   * least every half tick (so that each of the followers' reports to the leader names it).
   *
   * @param id a session id
   * @return the heartbeat interval in nanoseconds
   */
  long heartbeatNanos(long id) {
    long timeout = timeoutNanos(id);
    return Math.max(MIN_HEARTBEAT_NANOS, Math.min(timeout / 6, tickNanos(timeout) / 2));
  }

  /** Floor of the heartbeat interval: sessions are at least 100 ms (builder) and ticks are at least 1 ms. */
  static final long MIN_HEARTBEAT_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

  private long timeoutNanos(long id) {
    Session s = sessions.get(id);
    return s != null ? s.timeoutNanos : requestedTimeoutNanos;
  }

  /**
   * @param id a session id
   * @return its timeout as negotiated (or requested, until known)
   */
  Duration timeout(long id) {
    return Duration.ofNanos(timeoutNanos(id));
  }

  /** Forgets sessions that are over and hold nothing; {@code inUse} says which are still referenced. */
  void prune(java.util.Set<Long> inUse) {
    sessions.values().removeIf(s -> s.over && !inUse.contains(s.id));
  }
}
