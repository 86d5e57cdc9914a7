package io.locksmith.bench;

import io.locksmith.Lease;
import io.locksmith.LeaseSource;
import io.locksmith.LockClient;
import java.time.Duration;
import java.util.Optional;
import java.util.function.BiFunction;

/** Locksmith's lease view of one lock kind: {@code tryAcquire(wait)}, then {@code release()}. */
final class LocksmithImpl implements LockImpl {
  private final String name;
  private final LockClient client;
  private final BiFunction<LockClient, String, LeaseSource> kind;
  private final BiFunction<LockClient, String, LeaseSource> sharedKind;

  /** The exclusive lock. */
  LocksmithImpl(String name, LockClient client) {
    this(name, client, LockClient::lock);
  }

  /**
   * @param kind the lock of a name, e.g. {@code LockClient::fairLock}; also taken for reads
   */
  LocksmithImpl(String name, LockClient client, BiFunction<LockClient, String, LeaseSource> kind) {
    this(name, client, kind, kind);
  }

  /**
   * @param kind the lock of a name (the write side of a read-write lock)
   * @param sharedKind the lock readers take (its read side)
   */
  LocksmithImpl(String name, LockClient client, BiFunction<LockClient, String, LeaseSource> kind,
      BiFunction<LockClient, String, LeaseSource> sharedKind) {
    this.name = name;
    this.client = client;
    this.kind = kind;
    this.sharedKind = sharedKind;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public Held acquire(String lockName, long waitNanos) throws InterruptedException {
    Optional<Lease> lease = kind.apply(client, lockName).tryAcquire(Duration.ofNanos(waitNanos));
    return lease.<Held>map(l -> l::release).orElse(null);
  }

  @Override
  public Held acquireShared(String lockName, long waitNanos) throws InterruptedException {
    Optional<Lease> lease = sharedKind.apply(client, lockName).tryAcquire(Duration.ofNanos(waitNanos));
    return lease.<Held>map(l -> l::release).orElse(null);
  }

  @Override
  public void close() {
    client.close();
  }
}
