package io.locksmith.injvm;

import io.locksmith.ClientOptions;
import io.locksmith.LockClient;
import io.locksmith.LockInfo;
import io.locksmith.Ticker;
import io.locksmith.internal.DefaultLockClient;
import io.locksmith.spi.AcquireMode;
import io.locksmith.spi.AcquireReply;
import io.locksmith.spi.BackendEvents;
import io.locksmith.spi.HoldKind;
import io.locksmith.spi.WakeupSink;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A lock "server" inside the JVM: the shared state several {@link LockClient}s contend on, exactly as
 * separate processes contend on a Redis server. Leases expire by this server's own clock, releases wake
 * one registered waiter, and fencing tokens come from one counter, so they are strictly increasing
 * ({@link io.locksmith.FencingGuarantee#STRICT}).
 *
 * <p>It offers every {@link io.locksmith.LockKind}: the fair lock queues waiters in arrival order (a
 * place not refreshed for 2 s expires), the read-write lock admits phase-fairly (the readers waiting
 * when a write phase ends enter before the next writer; readers arriving while a writer waits queue
 * behind it), and a semaphore stores the first declared permit count.
 *
 * <p>Useful for an application's unit tests (no server to start) and as the reference the TCK runs
 * against. Thread-safe: every operation is atomic under the server's monitor; wake-ups are delivered
 * after it is released.
 */
public final class InJvmLockServer {
  private final Ticker clock;
  private final Map<String, Entry> locks = new HashMap<>();
  private final Map<String, LinkedHashMap<String, WakeupSink>> waiters = new HashMap<>();
  /** The other lock kinds, with their own monitor. */
  final InJvmKindTable kinds;
  private long lastToken;
  private volatile boolean reachable = true;
  /** Each open client's events, by client id: where a force-unlock tells the evicted holder. */
  private final Map<String, BackendEvents> clients = new java.util.concurrent.ConcurrentHashMap<>();

  /** A server whose leases expire by {@link Ticker#system()}. */
  public InJvmLockServer() {
    this(Ticker.system());
  }

  /**
   * @param clock the server's clock, which judges lease expiry (inject a manual one to test expiry)
   * @throws NullPointerException if {@code clock} is null
   */
  public InJvmLockServer(Ticker clock) {
    this.clock = Objects.requireNonNull(clock, "clock");
    this.kinds = new InJvmKindTable(clock);
  }

  /**
   * @return a new client of this server with default options
   */
  public LockClient newClient() {
    return newClient(ClientOptions.defaults());
  }

  /**
   * @param options the client's options
   * @return a new client of this server; close it when done
   * @throws NullPointerException if {@code options} is null
   */
  public LockClient newClient(ClientOptions options) {
    return new DefaultLockClient(new InJvmBackend(this), options);
  }

  /**
   * Simulates an outage: while unreachable, every operation of every client fails with
   * {@link io.locksmith.BackendUnavailableException}, as a network partition would; leases held
   * meanwhile go {@link io.locksmith.LeaseState#UNCERTAIN}, then {@link io.locksmith.LeaseState#LOST}
   * when their validity runs out. State kept by the server (holds, expiry) is unaffected.
   *
   * @param reachable false to cut every client off, true to heal
   */
  public void setReachable(boolean reachable) {
    this.reachable = reachable;
  }

  boolean reachable() {
    return reachable;
  }

  private static final class Entry {
    String owner;
    int holds;
    long token;
    long expiresAt;
  }

  /** Passes a wake-up on in the table it came from. */
  @FunctionalInterface
  interface WakeSource {
    void passWakeup(String key, String goneWaiterId, List<Wake> wakes);
  }

  /** A wake-up to deliver once the monitor is released; {@code source} passes it on if unused. */
  record Wake(WakeupSink sink, String key, String name, String waiterId, WakeSource source) {
    /** @return whether a waiter took it */
    boolean deliver() {
      return sink.wake(name, waiterId);
    }
  }

  private Entry live(String key) {
    Entry e = locks.get(key);
    if (e != null && clock.nanoTime() - e.expiresAt >= 0) {
      locks.remove(key);
      return null;
    }
    return e;
  }

  synchronized AcquireReply acquire(String key, String owner, long leaseMillis, AcquireMode mode,
      String waiterId, WakeupSink sink) {
    long leaseNanos = TimeUnit.MILLISECONDS.toNanos(leaseMillis);
    Entry e = live(key);
    if (e == null) {
      if (mode == AcquireMode.REENTER) {
        return AcquireReply.lostHold();
      }
      e = new Entry();
      e.owner = owner;
      e.holds = 1;
      e.token = ++lastToken;
      e.expiresAt = clock.nanoTime() + leaseNanos;
      locks.put(key, e);
      removeWaiter(key, waiterId);
      return AcquireReply.granted(e.token, 1);
    }
    if (e.owner.equals(owner)) {
      e.holds = mode == AcquireMode.NEW ? 1 : e.holds + 1; // NEW: a leftover of an earlier attempt
      e.expiresAt = clock.nanoTime() + leaseNanos;
      return AcquireReply.granted(e.token, e.holds);
    }
    if (mode == AcquireMode.REENTER) {
      return AcquireReply.lostHold();
    }
    if (waiterId != null) {
      waiters.computeIfAbsent(key, k -> new LinkedHashMap<>()).put(waiterId, sink);
    }
    long left = TimeUnit.NANOSECONDS.toMillis(e.expiresAt - clock.nanoTime());
    return AcquireReply.busy(Math.max(1, left));
  }

  /** @return the holds left, -1 if not owned; {@code wakes} receives the waiter to wake */
  synchronized int release(String key, String owner, boolean all, List<Wake> wakes) {
    Entry e = live(key);
    if (e == null || !e.owner.equals(owner)) {
      return -1;
    }
    e.holds = all ? 0 : e.holds - 1;
    if (e.holds > 0) {
      return e.holds;
    }
    locks.remove(key);
    nextWaiter(key, wakes);
    return 0;
  }

  synchronized List<Boolean> renew(List<String> keys, List<String> owners, List<Long> leaseMillis) {
    List<Boolean> result = new ArrayList<>(keys.size());
    for (int i = 0; i < keys.size(); i++) {
      Entry e = live(keys.get(i));
      boolean owned = e != null && e.owner.equals(owners.get(i));
      if (owned) {
        e.expiresAt = clock.nanoTime() + TimeUnit.MILLISECONDS.toNanos(leaseMillis.get(i));
      }
      result.add(owned);
    }
    return result;
  }

  synchronized void cancelWait(String key, String waiterId) {
    removeWaiter(key, waiterId);
  }

  synchronized void passWakeup(String key, List<Wake> wakes) {
    if (live(key) == null) {
      nextWaiter(key, wakes);
    }
  }

  synchronized Optional<LockInfo> inspect(String key, String name) {
    Entry e = live(key);
    if (e == null) {
      return Optional.empty();
    }
    Map<String, WakeupSink> queue = waiters.get(key);
    return Optional.of(new LockInfo(name, e.owner, e.holds, e.token,
        Duration.ofNanos(e.expiresAt - clock.nanoTime()), queue == null ? 0 : queue.size()));
  }

  /**
   * @param evicted receives the owner id of the hold removed
   * @return whether a hold was removed
   */
  synchronized boolean forceUnlock(String key, List<Wake> wakes, List<String> evicted) {
    Entry e = live(key);
    if (e == null) {
      return false;
    }
    locks.remove(key);
    evicted.add(e.owner);
    nextWaiter(key, wakes);
    return true;
  }

  /** A client opened: force-unlocks of its holds are told to {@code events}. */
  void connect(String clientId, BackendEvents events) {
    clients.put(clientId, events);
  }

  /** A client closed. */
  void disconnect(String clientId, BackendEvents events) {
    clients.remove(clientId, events);
  }

  /**
   * Tells the clients of {@code owners} that their holds were force-unlocked, as the Redis scripts do
   * through each client's channel; call outside every monitor. An owner id starts with its client's id.
   */
  void noticeEvicted(HoldKind kind, String name, List<String> owners) {
    for (String owner : owners) {
      int colon = owner.indexOf(':');
      BackendEvents events = colon > 0 ? clients.get(owner.substring(0, colon)) : null;
      if (events != null) {
        events.ownerEvicted(kind, name, owner, "force-unlocked");
      }
    }
  }

  /** Drops every waiter registered through {@code sink} (its client closed). */
  synchronized void dropWaiters(WakeupSink sink) {
    for (Iterator<LinkedHashMap<String, WakeupSink>> it = waiters.values().iterator(); it.hasNext(); ) {
      LinkedHashMap<String, WakeupSink> queue = it.next();
      queue.values().removeIf(s -> s == sink);
      if (queue.isEmpty()) {
        it.remove();
      }
    }
  }

  private void removeWaiter(String key, String waiterId) {
    if (waiterId == null) {
      return;
    }
    LinkedHashMap<String, WakeupSink> queue = waiters.get(key);
    if (queue != null) {
      queue.remove(waiterId);
      if (queue.isEmpty()) {
        waiters.remove(key);
      }
    }
  }

  /** Wakes the longest-registered waiter, only one: a release never starts a herd. */
  private void nextWaiter(String key, List<Wake> wakes) {
    LinkedHashMap<String, WakeupSink> queue = waiters.get(key);
    if (queue == null) {
      return;
    }
    Iterator<Map.Entry<String, WakeupSink>> it = queue.entrySet().iterator();
    if (it.hasNext()) {
      Map.Entry<String, WakeupSink> first = it.next();
      it.remove();
      wakes.add(new Wake(first.getValue(), key, key.substring(key.indexOf('\u0000') + 1), first.getKey(),
          (k, gone, w) -> passWakeup(k, w)));
    }
    if (queue.isEmpty()) {
      waiters.remove(key);
    }
  }
}
