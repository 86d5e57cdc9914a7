package io.locksmith.injvm;

import io.locksmith.LockInfo;
import io.locksmith.PermitHolder;
import io.locksmith.SemaphoreInfo;
import io.locksmith.SemaphoreState;
import io.locksmith.Ticker;
import io.locksmith.spi.AcquireMode;
import io.locksmith.spi.AcquireReply;
import io.locksmith.spi.RenewRequest;
import io.locksmith.spi.WakeupSink;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;

/**
 * The in-JVM server's state for the fair lock, the read-write lock and the semaphore; the exclusive lock
 * keeps its own table in {@link InJvmLockServer}. One resource per kind and name holds an exclusive side
 * (fair holder or writer) and a shared side (readers or permits), plus one queue of waiters. Every
 * operation is atomic under this table's monitor; wake-ups are collected and delivered afterwards.
 *
 * <p>The read-write lock admits phase-fairly, with the rule of the Redis backend (docs/read-write-lock.md):
 * a waiting reader holds a ticket, the write generation (count of write grants) whose end it waits for;
 * once that write phase is over it is due: it enters even while writers wait, and no writer is granted
 * while a due reader waits. Readers that arrive while writers wait (and none holds) queue behind the next
 * writer. A woken reader or writer keeps its place until it comes, for {@link #WOKEN_PLACE_TIMEOUT} at most.
 */
final class InJvmKindTable {
  /** How long a fair-lock waiter keeps its place without trying again. */
  static final Duration FAIR_PLACE_TIMEOUT = Duration.ofSeconds(2);
  /** How long a woken read-write waiter keeps its place (and keeps the other side out) until it comes. */
  static final Duration WOKEN_PLACE_TIMEOUT = Duration.ofSeconds(2);
  /** A read-write reader's ticket once it was let in (woken) and has not entered yet. */
  private static final long ADMITTED = 0;

  /** Which rule a resource follows; the tag keeps kinds of one name apart. */
  enum Kind {
    FAIR('f'), READ_WRITE('w'), SEMAPHORE('s');

    final char tag;

    Kind(char tag) {
      this.tag = tag;
    }
  }

  /** Which side of a resource an operation concerns. */
  enum Side {
    FAIR(Kind.FAIR, true), WRITE(Kind.READ_WRITE, true), READ(Kind.READ_WRITE, false),
    PERMIT(Kind.SEMAPHORE, false);

    final Kind kind;
    final boolean exclusive;

    Side(Kind kind, boolean exclusive) {
      this.kind = kind;
      this.exclusive = exclusive;
    }
  }

  private static final class Hold {
    int holds;
    long token;
    long expiresAt;
  }

  /**
   * A registered waiter. {@code placeExpiresAt} 0: the place does not expire. {@code ticket}: for a
   * read-write reader, the write generation whose end it waits for, or {@link #ADMITTED}; else unused.
   */
  private record Waiter(WakeupSink sink, boolean writer, long placeExpiresAt, long ticket) {
    Waiter woken(long expiresAt) {
      return new Waiter(sink, writer, expiresAt, writer ? ticket : ADMITTED);
    }
  }

  private static final class Resource {
    final Map<String, Hold> exclusive = new LinkedHashMap<>();
    final Map<String, Hold> shared = new LinkedHashMap<>();
    final LinkedHashMap<String, Waiter> queue = new LinkedHashMap<>();
    int storedPermits;
    long lastExclusiveToken;
    /** Read-write lock: fresh write grants so far, the generation readers' tickets refer to. */
    long writeGeneration;

    /** Nothing to keep: a read-write lock keeps its last write token for its next readers. */
    boolean idle() {
      return exclusive.isEmpty() && shared.isEmpty() && queue.isEmpty() && storedPermits == 0
          && lastExclusiveToken == 0;
    }
  }

  private final Ticker clock;
  private final Map<String, Resource> resources = new HashMap<>();
  private long lastToken;

  InJvmKindTable(Ticker clock) {
    this.clock = clock;
  }

  private static String id(Side side, String key) {
    return side.kind.tag + key;
  }

  /** The resource with expired holds and fair places dropped. */
  private Resource live(Side side, String key, boolean create) {
    Resource r = resources.get(id(side, key));
    if (r == null) {
      if (!create) {
        return null;
      }
      r = new Resource();
      resources.put(id(side, key), r);
    }
    long now = clock.nanoTime();
    r.exclusive.values().removeIf(h -> now - h.expiresAt >= 0);
    r.shared.values().removeIf(h -> now - h.expiresAt >= 0);
    r.queue.values().removeIf(w -> w.placeExpiresAt != 0 && now - w.placeExpiresAt >= 0);
    return r;
  }

  private void forgetIfIdle(Side side, String key, Resource r) {
    if (r.idle()) {
      resources.remove(id(side, key));
    }
  }

  private static int permits(Resource r, int declared) {
    return r.storedPermits > 0 ? r.storedPermits : declared;
  }

  synchronized AcquireReply acquire(Side side, String key, String owner, long leaseMillis, AcquireMode mode,
      String waiterId, WakeupSink sink, int declaredPermits, List<InJvmLockServer.Wake> wakes) {
    Resource r = live(side, key, true);
    long now = clock.nanoTime();
    long leaseNanos = TimeUnit.MILLISECONDS.toNanos(leaseMillis);
    Map<String, Hold> mine = side.exclusive ? r.exclusive : r.shared;
    Hold h = mine.get(owner);
    if (h != null) { // re-entry, or NEW: a leftover of an earlier attempt of the same acquisition
      h.holds = mode == AcquireMode.NEW ? 1 : h.holds + 1;
      h.expiresAt = now + leaseNanos;
      return AcquireReply.granted(h.token, h.holds);
    }
    if (mode == AcquireMode.REENTER) {
      return AcquireReply.lostHold();
    }
    if (side == Side.PERMIT && r.storedPermits == 0) {
      r.storedPermits = declaredPermits; // the first acquisition stores the declared count
    }
    if (grantable(side, r, owner, waiterId, declaredPermits)) {
      h = new Hold();
      h.holds = 1;
      h.expiresAt = now + leaseNanos;
      h.token = side == Side.READ ? r.lastExclusiveToken : ++lastToken;
      if (side == Side.WRITE) {
        r.lastExclusiveToken = h.token; // what the next readers carry
        r.writeGeneration++; // a new write phase: readers refused from now on wait for its end
      }
      mine.put(owner, h);
      if (waiterId != null) {
        r.queue.remove(waiterId);
      }
      if (side == Side.READ) {
        if (r.exclusive.isEmpty()) { // not a downgrade: let in the other readers that may enter
          admitReaders(key, r, writersWait(r), wakes);
        }
      } else if (!side.exclusive) {
        chainWake(side, key, r, declaredPermits, wakes); // more permits may fit
      }
      return AcquireReply.granted(h.token, 1);
    }
    if (waiterId != null) {
      if (side == Side.READ) {
        // a reader registered again keeps its first ticket, hence its place
        long ticket = r.exclusive.isEmpty() ? r.writeGeneration + 1 : r.writeGeneration;
        r.queue.putIfAbsent(waiterId, new Waiter(sink, false, 0, ticket));
      } else {
        long place = side.kind == Kind.FAIR ? now + FAIR_PLACE_TIMEOUT.toNanos() : 0;
        r.queue.put(waiterId, new Waiter(sink, side == Side.WRITE, place, 0)); // keeps its position if present
      }
    }
    if (side.kind == Kind.READ_WRITE && r.exclusive.isEmpty()) {
      // refused while no writer holds: wake whoever may enter and was not woken (a writer's lease may
      // have run out, which no release announced), e.g. the due readers a refused writer waits for
      wakeReadWrite(key, r, wakes);
    }
    long retry = Long.MAX_VALUE;
    for (Hold other : (side == Side.PERMIT ? r.shared : all(r)).values()) {
      retry = Math.min(retry, other.expiresAt - now);
    }
    if (side.kind == Kind.READ_WRITE) {
      for (Waiter w : r.queue.values()) { // a woken waiter that does not come gives its place up then
        if (w.placeExpiresAt() != 0) {
          retry = Math.min(retry, w.placeExpiresAt() - now);
        }
      }
    }
    if (side.kind == Kind.FAIR) {
      retry = Math.min(retry, FAIR_PLACE_TIMEOUT.toNanos() / 3);
    }
    if (retry == Long.MAX_VALUE) {
      retry = TimeUnit.MILLISECONDS.toNanos(50); // refused only because of queued waiters
    }
    return AcquireReply.busy(Math.max(1, TimeUnit.NANOSECONDS.toMillis(retry)));
  }

  private static Map<String, Hold> all(Resource r) {
    Map<String, Hold> all = new HashMap<>(r.shared);
    all.putAll(r.exclusive);
    return all;
  }

  private static boolean grantable(Side side, Resource r, String owner, String waiterId, int declared) {
    switch (side) {
      case FAIR: {
        if (!r.exclusive.isEmpty()) {
          return false;
        }
        Iterator<String> head = r.queue.keySet().iterator();
        return !head.hasNext() || head.next().equals(waiterId);
      }
      case WRITE:
        return r.exclusive.isEmpty() && r.shared.isEmpty() && !anyDueReader(r); // due readers go first
      case READ: {
        if (r.exclusive.containsKey(owner)) {
          return true; // a downgrade: the writer may read
        }
        if (!r.exclusive.isEmpty()) {
          return false;
        }
        Waiter me = waiterId == null ? null : r.queue.get(waiterId);
        // due (its write phase is over) or, if it came later, only while no writer waits
        return (me != null && !me.writer() && due(r, me)) || !writersWait(r);
      }
      case PERMIT:
        return r.shared.size() < permits(r, declared);
      default:
        throw new AssertionError(side);
    }
  }

  /** Read-write lock, no writer holding: whether waiting reader {@code w} may enter before any writer. */
  private static boolean due(Resource r, Waiter w) {
    return w.ticket() == ADMITTED || w.ticket() <= r.writeGeneration;
  }

  private static boolean anyDueReader(Resource r) {
    for (Waiter w : r.queue.values()) {
      if (!w.writer() && due(r, w)) {
        return true;
      }
    }
    return false;
  }

  private static boolean writersWait(Resource r) {
    for (Waiter w : r.queue.values()) {
      if (w.writer()) {
        return true;
      }
    }
    return false;
  }

  /**
   * Read-write lock, no writer holding: wakes the readers that may enter and were not woken yet (while
   * writers wait the due ones, else all). A woken reader keeps its place, admitted, until it comes, so
   * that no writer slips in before it and it is not woken twice.
   */
  private void admitReaders(String key, Resource r, boolean writersWait, List<InJvmLockServer.Wake> wakes) {
    long expires = clock.nanoTime() + WOKEN_PLACE_TIMEOUT.toNanos();
    for (Map.Entry<String, Waiter> e : r.queue.entrySet()) {
      Waiter w = e.getValue();
      if (!w.writer() && w.ticket() != ADMITTED && (!writersWait || due(r, w))) {
        e.setValue(w.woken(expires));
        wakes.add(wake(Side.READ, key, e.getKey(), e.getValue()));
      }
    }
  }

  /**
   * Read-write lock: after a change, wake whoever may enter. A writer holds: nobody (its release will).
   * Else the readers that may enter; and once no reader is due or holds, the first waiting writer, which
   * keeps its place (and readers out) until it comes.
   */
  private void wakeReadWrite(String key, Resource r, List<InJvmLockServer.Wake> wakes) {
    if (!r.exclusive.isEmpty()) {
      return;
    }
    boolean writersWait = writersWait(r);
    admitReaders(key, r, writersWait, wakes);
    if (!writersWait || anyDueReader(r) || !r.shared.isEmpty()) {
      return;
    }
    for (Map.Entry<String, Waiter> e : r.queue.entrySet()) {
      if (e.getValue().writer()) {
        if (e.getValue().placeExpiresAt() == 0) { // not woken yet (a woken one is on its way)
          e.setValue(e.getValue().woken(clock.nanoTime() + WOKEN_PLACE_TIMEOUT.toNanos()));
          wakes.add(wake(Side.WRITE, key, e.getKey(), e.getValue()));
        }
        return;
      }
    }
  }

  /** After a permit grant: wake the next waiter if another permit is free. */
  private void chainWake(Side side, String key, Resource r, int declared, List<InJvmLockServer.Wake> wakes) {
    Iterator<Map.Entry<String, Waiter>> it = r.queue.entrySet().iterator();
    if (!it.hasNext()) {
      return;
    }
    Map.Entry<String, Waiter> next = it.next();
    boolean fits = r.shared.size() < permits(r, declared);
    if (fits) {
      it.remove();
      wakes.add(wake(side, key, next.getKey(), next.getValue()));
    }
  }

  private InJvmLockServer.Wake wake(Side side, String key, String waiterId, Waiter w) {
    return new InJvmLockServer.Wake(w.sink(), id(side, key), key.substring(key.indexOf('\u0000') + 1),
        waiterId, this::passWakeup);
  }

  /**
   * Wakes the head of the queue: one waiter, or for a semaphore one per free permit. A fair lock's head
   * keeps its place (it leaves the queue when granted or when its place expires).
   */
  private void wakeNext(Side side, String key, Resource r, int declared, List<InJvmLockServer.Wake> wakes) {
    if (side.kind == Kind.READ_WRITE) {
      wakeReadWrite(key, r, wakes);
      return;
    }
    int count = side.kind == Kind.SEMAPHORE ? Math.max(0, permits(r, declared) - r.shared.size()) : 1;
    Iterator<Map.Entry<String, Waiter>> it = r.queue.entrySet().iterator();
    while (count-- > 0 && it.hasNext()) {
      Map.Entry<String, Waiter> next = it.next();
      if (side.kind != Kind.FAIR) {
        it.remove();
      }
      wakes.add(wake(side, key, next.getKey(), next.getValue()));
    }
  }

  synchronized int release(Side side, String key, String owner, boolean all, List<InJvmLockServer.Wake> wakes) {
    Resource r = live(side, key, false);
    Hold h = r == null ? null : (side.exclusive ? r.exclusive : r.shared).get(owner);
    if (h == null) {
      return -1;
    }
    h.holds = all ? 0 : h.holds - 1;
    if (h.holds > 0) {
      return h.holds;
    }
    (side.exclusive ? r.exclusive : r.shared).remove(owner);
    if (r.exclusive.isEmpty()) {
      wakeNext(side, key, r, 0, wakes);
    }
    forgetIfIdle(side, key, r);
    return 0;
  }

  synchronized List<Boolean> renew(Side side, List<RenewRequest> requests, List<String> keys) {
    List<Boolean> out = new ArrayList<>(requests.size());
    long now = clock.nanoTime();
    for (int i = 0; i < requests.size(); i++) {
      Resource r = live(side, keys.get(i), false);
      Hold h = r == null ? null : (side.exclusive ? r.exclusive : r.shared).get(requests.get(i).owner());
      if (h != null) {
        h.expiresAt = now + TimeUnit.MILLISECONDS.toNanos(requests.get(i).leaseMillis());
      }
      out.add(h != null);
    }
    return out;
  }

  synchronized void cancelWait(Side side, String key, String waiterId, List<InJvmLockServer.Wake> wakes) {
    Resource r = live(side, key, false);
    if (r == null) {
      return;
    }
    Iterator<String> head = r.queue.keySet().iterator();
    boolean wasHead = head.hasNext() && head.next().equals(waiterId);
    Waiter removed = r.queue.remove(waiterId);
    // a fair lock's new head, the readers a leaving writer kept out, or the writer a leaving due reader
    // kept out need not wait for their backstop
    if (removed != null && r.exclusive.isEmpty() && ((wasHead && side.kind == Kind.FAIR) || removed.writer()
        || (side.kind == Kind.READ_WRITE && due(r, removed)))) { // (a writer's ticket reads as due)
      wakeNext(side, key, r, 0, wakes);
    }
    forgetIfIdle(side, key, r);
  }

  /** Passes on a wake-up whose waiter was gone; {@code id} is a {@link InJvmLockServer.Wake#key()}. */
  synchronized void passWakeup(String id, String goneWaiterId, List<InJvmLockServer.Wake> wakes) {
    Side side = id.charAt(0) == Kind.FAIR.tag ? Side.FAIR
        : id.charAt(0) == Kind.SEMAPHORE.tag ? Side.PERMIT : Side.WRITE;
    passWakeup(side, id.substring(1), goneWaiterId, wakes);
  }

  synchronized void passWakeup(Side side, String key, String goneWaiterId, List<InJvmLockServer.Wake> wakes) {
    Resource r = live(side, key, false);
    if (r != null) {
      r.queue.remove(goneWaiterId); // a fair head stays queued when woken: gone, it must leave
    }
    if (r != null && r.exclusive.isEmpty() && (side.kind != Kind.SEMAPHORE || r.shared.size() < permits(r, 1))) {
      wakeNext(side, key, r, 1, wakes);
    }
  }

  synchronized Optional<LockInfo> inspect(Side side, String key, String name) {
    Resource r = live(side, key, false);
    if (r == null) {
      return Optional.empty();
    }
    Map<String, Hold> holds = side.exclusive ? r.exclusive : r.shared;
    Map.Entry<String, Hold> last = null;
    for (Map.Entry<String, Hold> e : holds.entrySet()) {
      if (last == null || e.getValue().expiresAt - last.getValue().expiresAt > 0) {
        last = e;
      }
    }
    if (last == null) {
      return Optional.empty();
    }
    int holdCount = side.exclusive ? last.getValue().holds : holds.size();
    return Optional.of(new LockInfo(name, last.getKey(), holdCount, last.getValue().token,
        Duration.ofNanos(last.getValue().expiresAt - clock.nanoTime()), r.queue.size()));
  }

  /** @param evicted receives the owner id of every hold removed */
  synchronized boolean forceUnlock(Side side, String key, List<InJvmLockServer.Wake> wakes, List<String> evicted) {
    Resource r = live(side, key, false);
    if (r == null) {
      return false;
    }
    Map<String, Hold> holds = side.exclusive ? r.exclusive : r.shared;
    boolean deleted = !holds.isEmpty();
    evicted.addAll(holds.keySet());
    holds.clear();
    if (deleted && r.exclusive.isEmpty()) {
      wakeNext(side, key, r, 1, wakes);
    }
    forgetIfIdle(side, key, r);
    return deleted;
  }

  synchronized SemaphoreInfo describe(String key, String name, int declared) {
    Resource r = live(Side.PERMIT, key, false);
    return r == null ? new SemaphoreInfo(name, declared, 0, 0)
        : new SemaphoreInfo(name, permits(r, declared), r.shared.size(), r.queue.size());
  }

  /** The stored count (empty if none), every unexpired permit's holder and the waiters; stores nothing. */
  synchronized SemaphoreState state(String key, String name) {
    Resource r = live(Side.PERMIT, key, false);
    if (r == null) {
      return new SemaphoreState(name, OptionalInt.empty(), List.of(), 0);
    }
    long now = clock.nanoTime();
    List<PermitHolder> holders = new ArrayList<>(r.shared.size());
    r.shared.forEach((owner, h) -> holders.add(new PermitHolder(owner, h.token,
        Duration.ofNanos(Math.max(0, h.expiresAt - now)))));
    return new SemaphoreState(name, r.storedPermits > 0 ? OptionalInt.of(r.storedPermits) : OptionalInt.empty(),
        holders, r.queue.size());
  }

  synchronized void setPermits(String key, int permits, List<InJvmLockServer.Wake> wakes) {
    Resource r = live(Side.PERMIT, key, true);
    r.storedPermits = permits;
    wakeNext(Side.PERMIT, key, r, permits, wakes);
  }

  /** Drops every waiter registered through {@code sink} (its client closed). */
  synchronized void dropWaiters(WakeupSink sink) {
    for (Resource r : resources.values()) {
      r.queue.values().removeIf(w -> w.sink() == sink);
    }
  }
}
