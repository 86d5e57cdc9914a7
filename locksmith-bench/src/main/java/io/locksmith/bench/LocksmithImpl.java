package io.locksmith.bench;

import io.locksmith.Lease;
import io.locksmith.LockClient;

/** Locksmith's lease view: {@code lock(name).acquire()}, then {@code release()}. */
final class LocksmithImpl implements LockImpl {
  private final String name;
  private final LockClient client;

  LocksmithImpl(String name, LockClient client) {
    this.name = name;
    this.client = client;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public Held acquire(String lockName, long waitNanos) throws InterruptedException {
    java.util.Optional<Lease> lease = client.lock(lockName).tryAcquire(java.time.Duration.ofNanos(waitNanos));
    return lease.<Held>map(l -> l::release).orElse(null);
  }

  @Override
  public void close() {
    client.close();
  }
}
