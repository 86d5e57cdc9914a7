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

  /** The exclusive lock. */
  LocksmithImpl(String name, LockClient client) {
    this(name, client, LockClient::lock);
  }

  /**
   * @param kind the lock of a name, e.g. {@code LockClient::fairLock}
   */
  LocksmithImpl(String name, LockClient client, BiFunction<LockClient, String, LeaseSource> kind) {
    this.name = name;
    this.client = client;
    this.kind = kind;
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
  public void close() {
    client.close();
  }
}
