package io.locksmith.spring;

import io.locksmith.Lease;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.springframework.context.SmartLifecycle;

/**
 * The {@link DistributedLock} calls running now, so that shutdown neither cuts their locks silently nor
 * waits for ever. When the context closes, {@link #stop()} waits until every call in flight has ended,
 * up to {@code locksmith.annotation.shutdown-wait}; it then releases the leases of the calls still
 * running, logging each at WARN (their work goes on without its lock, which the client's closing would
 * have ended anyway, without a word). It stops in a phase after the web server's graceful shutdown, so
 * that no new requests arrive meanwhile, and before the clients are closed (bean destruction).
 *
 * <p>Thread-safe.
 */
final class LockedCallsInFlight implements SmartLifecycle {

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(LockedCallsInFlight.class);

  /** A call: its lease and lock name. */
  record Call(Lease lease, String lockName) {}

  private final Map<Object, Call> calls = new ConcurrentHashMap<>();
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition ended = lock.newCondition();
  private final Duration wait;
  private volatile boolean running;

  /**
   * @param wait how long {@link #stop()} waits for calls in flight; zero releases them at once
   */
  LockedCallsInFlight(Duration wait) {
    if (wait == null || wait.isNegative()) {
      throw new IllegalArgumentException("locksmith.annotation.shutdown-wait must be zero or more, was " + wait);
    }
    this.wait = wait;
  }

  /**
   * Records a call that now holds its lease.
   *
   * @return the token to pass to {@link #end}
   */
  Object begin(Lease lease, String lockName) {
    Object token = new Object();
    calls.put(token, new Call(lease, lockName));
    return token;
  }

  /** Records that the call has ended (its release follows or has run). */
  void end(Object token) {
    if (calls.remove(token) != null && calls.isEmpty()) {
      lock.lock();
      try {
        ended.signalAll();
      } finally {
        lock.unlock();
      }
    }
  }

  /** @return the calls in flight now */
  List<Call> inFlight() {
    return new ArrayList<>(calls.values());
  }

  @Override
  public void start() {
    running = true;
  }

  @Override
  public void stop() {
    running = false;
    long deadline = System.nanoTime() + wait.toNanos();
    if (!calls.isEmpty()) {
      LOG.info("@DistributedLock: waiting up to {} for {} locked call(s) in flight", wait, calls.size());
    }
    lock.lock();
    try {
      long left;
      while (!calls.isEmpty() && (left = deadline - System.nanoTime()) > 0) {
        ended.awaitNanos(left);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      lock.unlock();
    }
    for (Map.Entry<Object, Call> e : calls.entrySet()) {
      Call c = e.getValue();
      LOG.warn("@DistributedLock: shutting down with the call on lock '{}' still running after {}; its lease is released"
          + " now and the rest of its work runs WITHOUT the lock", c.lockName(), wait);
      c.lease().close(); // logs, never throws
      calls.remove(e.getKey());
    }
  }

  @Override
  public boolean isRunning() {
    return running;
  }

  /** After the web server's graceful shutdown ({@code DEFAULT_PHASE - 1024}), so no new requests come. */
  @Override
  public int getPhase() {
    return SmartLifecycle.DEFAULT_PHASE - 2048;
  }
}
