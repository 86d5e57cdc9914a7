package io.locksmith.check;

import io.locksmith.AcquireTimeoutException;
import io.locksmith.DistributedLock;
import io.locksmith.Lease;
import io.locksmith.LockClient;
import io.locksmith.LockException;
import io.locksmith.LockKind;
import io.locksmith.LockOptions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BooleanSupplier;

/**
 * One contending client: acquire a random lock name, read its register, think, write the version it
 * read plus one, release; every step recorded. It deliberately does not check its lease before
 * writing: that models a pause falling right after such a check (docs/fencing.md: a check narrows the
 * window, it never closes it).
 *
 * <p>The lock is of the run's kind ({@link CheckSettings#kind()}): the exclusive lock, the fair lock, or
 * the write side of a read-write lock. With a read-write lock, every second worker ({@link #reads}) is a
 * reader instead: it takes the read side, looks at the register, thinks, looks again and releases, and
 * never writes; a write between its two looks is a write under a read hold (the checker's
 * {@code writesUnderReadHolds}).
 */
final class Worker implements Runnable {
  private final String id;
  private final List<DistributedLock> locks;
  /** The register (lock) names, in the order of {@link #locks}: a side's own name may differ. */
  private final List<String> names;
  private final boolean reader;
  private final Duration wait;
  private final Channel channel;
  private final BooleanSupplier stopped;

  /**
   * @param kind EXCLUSIVE, FAIR or READ_WRITE
   * @param reader with READ_WRITE, whether this worker takes the read side ({@link #reads})
   * @throws UnsupportedOperationException if the client's backend lacks the kind
   */
  Worker(String id, LockClient client, LockOptions options, List<String> lockNames, Duration wait, Channel channel,
      BooleanSupplier stopped, LockKind kind, boolean reader) {
    this.id = id;
    this.reader = reader && kind == LockKind.READ_WRITE;
    this.locks = lockNames.stream().map(n -> switch (kind) {
      case EXCLUSIVE -> client.lock(n, options);
      case FAIR -> client.fairLock(n, options);
      case READ_WRITE -> this.reader ? client.readWriteLock(n, options).readLock()
          : client.readWriteLock(n, options).writeLock();
      case SEMAPHORE -> throw new IllegalArgumentException("the checker does not run semaphores");
    }).toList();
    this.names = List.copyOf(lockNames);
    this.wait = wait;
    this.channel = channel;
    this.stopped = stopped;
  }

  /** An exclusive-lock worker. */
  Worker(String id, LockClient client, LockOptions options, List<String> lockNames, Duration wait, Channel channel,
      BooleanSupplier stopped) {
    this(id, client, options, lockNames, wait, channel, stopped, LockKind.EXCLUSIVE, false);
  }

  /**
   * @param kind the run's lock kind
   * @param thread the worker's index in its JVM (harness threads: in the harness)
   * @return whether that worker reads: with a read-write lock the odd ones (half, rounded down), else none
   */
  static boolean reads(LockKind kind, int thread) {
    return kind == LockKind.READ_WRITE && thread % 2 == 1;
  }

  private void record(Event.Op op, Event.Type type, String lock, long token, String detail) {
    channel.event(new Event(System.nanoTime(), id, op, type, lock, token, 0, 0, detail));
  }

  @Override
  public void run() {
    if (reader) {
      readLoop();
      return;
    }
    try {
      while (!stopped.getAsBoolean()) {
        int pick = ThreadLocalRandom.current().nextInt(locks.size());
        DistributedLock lock = locks.get(pick);
        String name = names.get(pick);
        record(Event.Op.ACQUIRE, Event.Type.INVOKE, name, 0, "");
        Lease lease;
        try {
          lease = lock.acquire(wait);
        } catch (AcquireTimeoutException e) {
          record(Event.Op.ACQUIRE, Event.Type.FAIL, name, 0, "timeout");
          continue;
        } catch (LockException e) {
          record(Event.Op.ACQUIRE, Event.Type.INFO, name, 0, e.getClass().getSimpleName());
          Thread.sleep(ThreadLocalRandom.current().nextLong(50, 150)); // back off from an unavailable backend
          continue;
        } catch (IllegalStateException e) {
          record(Event.Op.ACQUIRE, Event.Type.INFO, name, 0, "client closed");
          return;
        }
        long token = lease.fencingToken();
        record(Event.Op.ACQUIRE, Event.Type.OK, name, token, "");
        lease.onLost(() -> { // on the client's event thread: when the lease knows it is lost
          try {
            record(Event.Op.LOST, Event.Type.OK, name, token, "");
          } catch (Channel.ChannelClosedException closed) {
            // the harness is gone
          }
        });
        try {
          Register.ReadResult read = channel.read(id, name, token);
          if (!read.stale()) {
            Thread.sleep(read.thinkMillis());
            channel.write(id, name, token, read.version());
          }
        } finally {
          record(Event.Op.RELEASE, Event.Type.INVOKE, name, token, "");
          try {
            boolean held = lease.release();
            record(Event.Op.RELEASE, held ? Event.Type.OK : Event.Type.FAIL, name, token, held ? "" : "lease was lost");
          } catch (LockException e) {
            record(Event.Op.RELEASE, Event.Type.INFO, name, token, e.getClass().getSimpleName());
          }
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Channel.ChannelClosedException e) {
      // the harness is gone: nothing left to record
    }
  }

  /** A reader: read side, look, think, look again, release; never writes. */
  private void readLoop() {
    try {
      while (!stopped.getAsBoolean()) {
        int pick = ThreadLocalRandom.current().nextInt(locks.size());
        DistributedLock lock = locks.get(pick);
        String name = names.get(pick);
        record(Event.Op.SHARED_ACQUIRE, Event.Type.INVOKE, name, 0, "");
        Lease lease;
        try {
          lease = lock.acquire(wait);
        } catch (AcquireTimeoutException e) {
          record(Event.Op.SHARED_ACQUIRE, Event.Type.FAIL, name, 0, "timeout");
          continue;
        } catch (LockException e) {
          record(Event.Op.SHARED_ACQUIRE, Event.Type.INFO, name, 0, e.getClass().getSimpleName());
          Thread.sleep(ThreadLocalRandom.current().nextLong(50, 150)); // back off from an unavailable backend
          continue;
        } catch (IllegalStateException e) {
          record(Event.Op.SHARED_ACQUIRE, Event.Type.INFO, name, 0, "client closed");
          return;
        }
        long token = lease.fencingToken();
        record(Event.Op.SHARED_ACQUIRE, Event.Type.OK, name, token, "");
        try {
          long first = channel.peek(id, name, false, 0);
          // the holder's critical section, as long as a writer's; not synchronization
          Thread.sleep(ThreadLocalRandom.current().nextLong(5, 26));
          channel.peek(id, name, true, first);
        } finally {
          record(Event.Op.SHARED_RELEASE, Event.Type.INVOKE, name, token, "");
          try {
            boolean held = lease.release();
            record(Event.Op.SHARED_RELEASE, held ? Event.Type.OK : Event.Type.FAIL, name, token,
                held ? "" : "lease was lost");
          } catch (LockException e) {
            record(Event.Op.SHARED_RELEASE, Event.Type.INFO, name, token, e.getClass().getSimpleName());
          }
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Channel.ChannelClosedException e) {
      // the harness is gone: nothing left to record
    }
  }
}
