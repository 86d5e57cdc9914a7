package io.locksmith.check;

import io.locksmith.AcquireTimeoutException;
import io.locksmith.DistributedLock;
import io.locksmith.Lease;
import io.locksmith.LockClient;
import io.locksmith.LockException;
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
 */
final class Worker implements Runnable {
  private final String id;
  private final List<DistributedLock> locks;
  private final Duration wait;
  private final Channel channel;
  private final BooleanSupplier stopped;

  Worker(String id, LockClient client, LockOptions options, List<String> lockNames, Duration wait, Channel channel,
      BooleanSupplier stopped) {
    this.id = id;
    this.locks = lockNames.stream().map(n -> client.lock(n, options)).toList();
    this.wait = wait;
    this.channel = channel;
    this.stopped = stopped;
  }

  private void record(Event.Op op, Event.Type type, String lock, long token, String detail) {
    channel.event(new Event(System.nanoTime(), id, op, type, lock, token, 0, 0, detail));
  }

  @Override
  public void run() {
    try {
      while (!stopped.getAsBoolean()) {
        DistributedLock lock = locks.get(ThreadLocalRandom.current().nextInt(locks.size()));
        String name = lock.name();
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
}
