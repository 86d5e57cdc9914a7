package io.locksmith.injvm;

import io.locksmith.Capabilities;
import io.locksmith.spi.BackendContext;
import io.locksmith.spi.LockBackend;
import io.locksmith.spi.LockOps;
import io.locksmith.spi.Primitive;
import io.locksmith.spi.SemaphoreOps;

/**
 * Test decorator of a whole backend: its exclusive-lock operations are this object's (so a subclass
 * overrides them), every other call goes to {@code backend} unchanged.
 */
class ForwardingBackend extends ForwardingLockOps implements LockBackend {
  final LockBackend backend;

  ForwardingBackend(LockBackend backend) {
    super(backend);
    this.backend = backend;
  }

  @Override
  public void open(BackendContext context) {
    backend.open(context);
  }

  @Override
  public Capabilities capabilities() {
    return backend.capabilities();
  }

  @Override
  public LockOps ops(Primitive primitive) {
    return primitive == Primitive.EXCLUSIVE ? this : backend.ops(primitive);
  }

  @Override
  public SemaphoreOps semaphoreOps(int declaredPermits) {
    return backend.semaphoreOps(declaredPermits);
  }

  @Override
  public void close() {
    backend.close();
  }
}
