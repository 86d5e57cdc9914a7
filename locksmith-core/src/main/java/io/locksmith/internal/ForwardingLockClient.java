package io.locksmith.internal;

import io.locksmith.Capabilities;
import io.locksmith.ClientOptions;
import io.locksmith.DistributedLock;
import io.locksmith.DistributedReadWriteLock;
import io.locksmith.DistributedSemaphore;
import io.locksmith.LockClient;
import io.locksmith.LockInfo;
import io.locksmith.LockOptions;
import io.locksmith.SemaphoreState;
import java.util.Optional;

/**
 * Base of a backend module's public client: a {@link DefaultLockClient} over the module's backend, plus
 * the module's builder and its own extras. Every {@link LockClient} method is forwarded unchanged, so
 * each backend's client behaves as the core defines. Not part of the API: backend modules only.
 *
 * <p>Thread-safe, as the delegate is; failures are the delegate's, unchanged.
 */
public abstract class ForwardingLockClient implements LockClient {
  private final DefaultLockClient delegate;

  /** @param delegate the core client every call goes to */
  protected ForwardingLockClient(DefaultLockClient delegate) {
    this.delegate = delegate;
  }

  @Override
  public DistributedLock lock(String name) {
    return delegate.lock(name);
  }

  @Override
  public DistributedLock lock(String name, LockOptions options) {
    return delegate.lock(name, options);
  }

  @Override
  public DistributedLock fairLock(String name, LockOptions options) {
    return delegate.fairLock(name, options);
  }

  @Override
  public DistributedReadWriteLock readWriteLock(String name, LockOptions options) {
    return delegate.readWriteLock(name, options);
  }

  @Override
  public DistributedSemaphore semaphore(String name, int permits, LockOptions options) {
    return delegate.semaphore(name, permits, options);
  }

  @Override
  public Capabilities capabilities() {
    return delegate.capabilities();
  }

  @Override
  public ClientOptions options() {
    return delegate.options();
  }

  @Override
  public String clientId() {
    return delegate.clientId();
  }

  @Override
  public Optional<LockInfo> inspect(String name) {
    return delegate.inspect(name);
  }

  @Override
  public SemaphoreState inspectSemaphore(String name) {
    return delegate.inspectSemaphore(name);
  }

  @Override
  public boolean forceUnlock(String name) {
    return delegate.forceUnlock(name);
  }

  @Override
  public void close() {
    delegate.close();
  }
}
